// Unpack the embedded plotly.js (gzip + base64, so the file stays small and needs no CDN), then draw
// every [data-chart] element from the figures JSON. body[data-charts] ends "drawn" or "failed": tests and
// screenshots wait on it.
(async function drawCharts() {
  const status = document.getElementById("kb-status");
  try {
    const nodes = document.querySelectorAll("[data-chart]");
    if (nodes.length === 0) {  // nothing to draw: the library is not even embedded
      document.body.dataset.charts = "drawn";
      return;
    }
    if (!("DecompressionStream" in window)) {
      throw new Error("this browser has no DecompressionStream, needed to unpack the embedded chart library");
    }
    const packed = document.getElementById("kb-plotly").textContent.trim();
    const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const library = document.createElement("script");
    library.textContent = await new Response(stream).text();
    document.head.appendChild(library);  // an inline script runs at once: window.Plotly is set after this line
    const figures = JSON.parse(document.getElementById("kb-figures").textContent);
    const config = {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"]};
    for (const node of nodes) {
      const figure = figures[node.id];
      await Plotly.newPlot(node, figure.data, figure.layout, config);
    }
    document.body.dataset.charts = "drawn";
  } catch (error) {
    status.textContent = "Charts could not be drawn (" + error.message + "). The tables hold every number.";
    status.hidden = false;
    document.body.dataset.charts = "failed";
    throw error;
  }
})();
