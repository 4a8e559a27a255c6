// PNG and SVG export of the selector heatmap (our own SVG, heatmapsvg.js), of a plotly chart (through plotly)
// or of the layer x head diagram.

import { heatmapSvgText } from "./heatmapsvg.js";

const STYLE_PROPS = ["fill", "stroke", "stroke-width", "opacity", "font-family", "font-size", "font-weight", "font-style"];

function inlineStyles(source, clone) {
  const a = source.querySelectorAll("*"), b = clone.querySelectorAll("*");
  a.forEach((node, i) => {
    const cs = getComputedStyle(node);
    const style = STYLE_PROPS.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(";");
    b[i].setAttribute("style", style);
  });
}

function download(blob, filename) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

function svgBlob(svgElement) {
  const clone = svgElement.cloneNode(true);
  inlineStyles(svgElement, clone);
  clone.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  const text = new XMLSerializer().serializeToString(clone);
  return new Blob([text], { type: "image/svg+xml" });
}

async function pngFromSvg(svgElement) {
  return pngFromBlob(svgBlob(svgElement), svgElement.width.baseVal.value, svgElement.height.baseVal.value);
}

async function pngFromBlob(blob, width, height) {
  const url = URL.createObjectURL(blob);
  const img = new Image();
  await new Promise((resolve, reject) => { img.onload = resolve; img.onerror = reject; img.src = url; });
  const scale = 2;
  const canvas = document.createElement("canvas");
  canvas.width = width * scale;
  canvas.height = height * scale;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.scale(scale, scale);
  ctx.drawImage(img, 0, 0);
  URL.revokeObjectURL(url);
  return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
}

export async function exportDiagram(container, format, name = "rasplay-diagram") {
  const svgElement = container.querySelector("svg");
  if (!svgElement) throw new Error("nothing to export yet");
  const blob = format === "svg" ? svgBlob(svgElement) : await pngFromSvg(svgElement);
  download(blob, `${name}.${format}`);
}

// The heatmap as drawn, with `title` above it (room made for it), saved as `name`.format.
export async function exportHeatmap(plot, format, name = "rasplay-heatmap", title = "") {
  if (plot.heatmap && plot.heatmap.svg.isConnected) {
    const { text, width, height } = heatmapSvgText(plot, title);
    const blob = new Blob([text], { type: "image/svg+xml" });
    download(format === "svg" ? blob : await pngFromBlob(blob, width, height), `${name}.${format}`);
    return;
  }
  if (!window.Plotly || !plot.data) throw new Error("no heatmap to export yet");
  const layout = { ...plot.layout };
  if (title) {
    const extra = Math.max(0, 8 * title.length + 24 - layout.width);   // widen on the right: cells keep their size
    const margin = { ...layout.margin, t: (layout.margin.t || 10) + 30, r: (layout.margin.r || 0) + extra };
    Object.assign(layout, { margin, height: layout.height + 30, width: layout.width + extra,
      title: { text: title.replace(/[<>&]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;" })[c]),
        font: { size: 14 }, x: 0.01, xanchor: "left", xref: "container", y: 0.99, yanchor: "top", yref: "container" } });
  }
  const url = await window.Plotly.toImage({ data: plot.data, layout }, { format, scale: format === "png" ? 2 : 1 });
  const blob = await (await fetch(url)).blob();
  download(blob, `${name}.${format}`);
}
