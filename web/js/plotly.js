// plotly.js (served by our own server from the installed plotly package) is large: it is loaded
// after the page's first render, so the editor, values and diagram are usable at once.

let loading = null;

export function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/vendor/plotly.min.js";
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => { loading = null; reject(new Error("plotly.js did not load")); };
      document.head.append(script);
    });
  }
  return loading;
}

export const plotlyReady = () => Boolean(window.Plotly);
