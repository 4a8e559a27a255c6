// Copies the prebuilt Swagger UI files rasplay serves at /docs from node_modules/swagger-ui-dist into
// ../swagger-ui/ (run via `npm run build`). The files are copied unchanged; nothing is rebuilt.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const src = join("node_modules", "swagger-ui-dist");
const out = join("..", "swagger-ui");
const read = (file) => readFileSync(join(src, file), "utf8").trim();
const { version, license } = JSON.parse(read("package.json"));
mkdirSync(out, { recursive: true });
for (const file of ["swagger-ui-bundle.js", "swagger-ui.css"]) copyFileSync(join(src, file), join(out, file));
const rule = "=".repeat(72);
const section = (title, text) => `${rule}\n${title}\n${rule}\n\n${text}\n`;
writeFileSync(join(out, "LICENSE.txt"), [
  `swagger-ui-dist@${version} (${license}), copied unchanged by web/vendor/swagger-ui-build/copy.mjs.\n`,
  section("NOTICE", read("NOTICE")),
  section("LICENSE", read("LICENSE")),
  section("Licence notices of the packages inside swagger-ui-bundle.js", read("swagger-ui-bundle.js.LICENSE.txt")),
].join("\n"));
console.log(`swagger-ui-dist@${version} -> ${out}`);
