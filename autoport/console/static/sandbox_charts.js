/* The sandbox vehicle page's live charts (uPlot, vendored): battery or fuel level, speed
   and odometer, and the track. The page works without script (it shows the latest
   values as of its loading); with it, the charts and the track follow the car over
   Server-Sent Events (the page's /events: `series` carries the new points, `track` the
   track's figure, `end` that the session is gone), or, in a browser without
   EventSource, by fetching series.json every two seconds. Loaded from our own origin
   (CSP script-src 'self'); no inline code. */
(function () {
  "use strict";
  var root = document.getElementById("charts");
  if (!root || typeof window.uPlot === "undefined") { return; }
  var url = root.getAttribute("data-series-url");
  var energy = root.getAttribute("data-energy");
  var charts = [
    { id: "chart-energy", key: energy, label: root.getAttribute("data-label-energy"), latest: "latest-energy", colour: "#146c2e" },
    { id: "chart-speed", key: "speed", label: root.getAttribute("data-label-speed"), latest: "latest-speed", colour: "#0b57d0" },
    { id: "chart-odometer", key: "odometer", label: root.getAttribute("data-label-odometer"), latest: "latest-odometer", colour: "#8a4b00" }
  ];
  var last = 0;
  var time = window.autoportTime;
  var number = new Intl.NumberFormat(document.documentElement.lang || undefined, { maximumFractionDigits: 3 });

  function width(element) {
    return Math.max(240, Math.floor(element.getBoundingClientRect().width || 320));
  }

  charts.forEach(function (chart) {
    var element = document.getElementById(chart.id);
    chart.element = element;
    chart.data = [[], []];
    chart.plot = new window.uPlot({
      width: width(element),
      height: 160,
      series: [{}, { label: chart.label, stroke: chart.colour, width: 2 }],
      // Room for an odometer's six digits and decimals; the title is the page's. Times in
      // the page's language and the reader's zone, UTC on hover (console.js).
      axes: [
        time ? { values: time.axis(false), space: time.space } : {},
        { size: chart.key === "odometer" ? 90 : 60 }
      ],
      scales: time ? { x: { time: true, range: time.scale } } : {},
      hooks: time ? { setCursor: [time.hover(false)] } : {},
      legend: { show: false }
    }, chart.data, element);
  });

  function apply(series) {
    charts.forEach(function (chart) {
      var points = series[chart.key] || [];
      if (!points.length) { return; }
      points.forEach(function (point) {
        chart.data[0].push(point[0]);
        chart.data[1].push(point[1]);
      });
      // Keep the newest 600 points, as the server does.
      var extra = chart.data[0].length - 600;
      if (extra > 0) { chart.data[0].splice(0, extra); chart.data[1].splice(0, extra); }
      chart.plot.setData(chart.data);
      var latest = document.getElementById(chart.latest);
      if (latest) { latest.textContent = number.format(chart.data[1][chart.data[1].length - 1]); }
    });
    root.setAttribute("data-points", String(charts[2].data[0].length));
  }

  function poll() {
    var target = url + (last ? "?after=" + encodeURIComponent(String(last)) : "");
    fetch(target, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) { if (body) { apply(body.series); last = body.after || last; } })
      .catch(function () { /* the next poll tries again */ })
      .finally(function () { window.setTimeout(poll, 2000); });
  }

  function follow() {
    var source = new window.EventSource(root.getAttribute("data-events-url"));
    source.addEventListener("series", function (event) {
      var body = JSON.parse(event.data);
      apply(body.series);
      last = body.after || last;
    });
    source.addEventListener("track", function (event) {
      var track = document.getElementById("track");
      if (track) { track.outerHTML = event.data; }
    });
    source.addEventListener("end", function () {
      source.close();
      root.setAttribute("data-live-state", "ended");
    });
    root.setAttribute("data-live-state", "open");
  }

  window.addEventListener("resize", function () {
    charts.forEach(function (chart) { chart.plot.setSize({ width: width(chart.element), height: 160 }); });
  });
  if (window.EventSource) { follow(); } else { poll(); }
}());
