// Copies plotly.js's official cartesian partial bundle from node_modules/plotly.js-cartesian-dist-min into
// ../plotly.min.js, unchanged, and its licence into ../plotly.LICENSE.txt (run via `npm run build`).
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const name = "plotly.js-cartesian-dist-min";
const src = join("node_modules", name);
const { version, license } = JSON.parse(readFileSync(join(src, "package.json"), "utf8"));
copyFileSync(join(src, "plotly-cartesian.min.js"), join("..", "plotly.min.js"));
const rule = "=".repeat(72);
writeFileSync(join("..", "plotly.LICENSE.txt"),
  `${name}@${version} (${license}), copied unchanged to plotly.min.js by web/vendor/plotly-build/copy.mjs.\n\n` +
  `${rule}\nLICENSE\n${rule}\n\n${readFileSync(join(src, "LICENSE"), "utf8").trim()}\n`);
console.log(`${name}@${version} -> ../plotly.min.js`);
