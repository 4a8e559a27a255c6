// plotly.js (web/vendor/plotly.min.js: a partial bundle of plotly's core, with its scatter trace, and the
// heatmap trace; recipe in web/vendor/plotly-build) is the app's largest file, and the first screen does not
// need it (the Program view's heatmap is our own SVG, heatmapsvg.js): it is loaded the first time a chart that
// needs it is shown (the Compile and Train views' attention heatmaps and curves, the length study). Its URL is
// relative to this module, so it comes from the same (versioned, immutable) tree of the app as the module itself.

let loading = null;

export function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = new URL("../vendor/plotly.min.js", import.meta.url).href;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => { loading = null; reject(new Error("plotly.js did not load")); };
      document.head.append(script);
    });
  }
  return loading;
}

export const plotlyReady = () => Boolean(window.Plotly);

// Every plotly chart's config: no link, button or upload to Plotly's cloud (Chart Studio), no logo link.
// (Options of older plotly.js versions are set too, so the config holds whatever plotly the server has.)
// The line charts (training curves, the soft-attention and length studies) pass CHART: no toolbar over the
// plot (it covered the 100% line), and tick labels in a readable format: a second y axis gets ticks of its own
// ("auto"; plotly's default for an overlaying axis, "sync", put them at 0.212, 0.424, ... to match the first's).
export const CHART = { displayModeBar: false };
export const TICKS = { percent: { tickformat: ".0%", dtick: 0.25 },
  number: { tickmode: "auto", tickformat: ".3~r", nticks: 4 } };

export function plotlyConfig(extra = {}) {
  return { displaylogo: false, showLink: false, linkText: "", showSendToCloud: false, showEditInChartStudio: false,
    sendData: false, plotlyServerURL: "", ...extra };
}

// Plotly reads a small HTML-like markup (<b>, <br>, <a href>) in hover text, titles and tick labels. Program,
// input and value text goes through this first, so it is shown as the characters it is, never as markup.
export function plotlyText(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
