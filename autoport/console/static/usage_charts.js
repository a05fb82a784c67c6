/* The usage page's charts (uPlot, vendored): requests per day and the webhook success
   rate per day, one line per application; the figures come from the page's JSON data
   block (not executed: CSP script-src 'self' holds). Without script the page shows the
   same figures as tables. */
(function () {
  "use strict";
  var block = document.getElementById("usage-data");
  if (!block || typeof window.uPlot === "undefined") { return; }
  var data = JSON.parse(block.textContent);
  var colours = ["#0b57d0", "#146c2e", "#b3261e", "#8a4b00", "#6a1b9a", "#00695c", "#4a5563", "#ad1457"];

  function draw(id, lines, options) {
    var element = document.getElementById(id);
    if (!element || !lines.length) { return; }
    var time = window.autoportTime;
    var series = [time ? { label: element.getAttribute("data-label-x"), value: time.value(true) } : {}];
    var rows = [data.x];
    lines.forEach(function (line, i) {
      series.push({ label: line.label, stroke: colours[i % colours.length], width: 2, spanGaps: false });
      rows.push(line.values);
    });
    var width = Math.max(260, Math.floor(element.getBoundingClientRect().width || 320));
    // The days are UTC days: dates in the page's language, written for UTC (console.js).
    var scales = options.scales || {};
    if (time) { scales.x = { time: true, range: time.scale }; }
    new window.uPlot({ width: width, height: 220, series: series, scales: scales,
      axes: [time ? { values: time.axis(true), space: time.space } : {}, { size: 60 }],
      // The legend names each application's colour; the values show on hover (the
      // chart's title), which keeps the legend one line an application on a phone.
      legend: { live: false },
      hooks: time ? { setCursor: [time.hover(true)] } : {} }, rows, element);
  }

  draw("chart-requests", data.requests, {});
  draw("chart-success", data.success, { scales: { y: { range: [0, 100] } } });
}());
