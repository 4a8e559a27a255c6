// plotly.js's own modules (its README's "load only the trace types you need"): the core (which always holds
// the scatter trace: the line plots of the training curves and the soft-attention study) and the heatmap
// trace (selector heatmaps, compiled and trained attention). Add a trace here (and to the test's list) to
// draw another kind of chart.
var Plotly = require("plotly.js/lib/core");
Plotly.register([require("plotly.js/lib/heatmap")]);
module.exports = Plotly;
