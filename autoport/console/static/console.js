/* The script of every console page (progressive enhancement: every page works
   without it). Copy buttons: <button data-copy="element-id">. Confirmations:
   <form data-confirm="question">. Live views:
   <div data-live="events-url" data-live-event="name">. The reader's time zone, for the
   server's dates. The charts' time axis and hover (window.autoportTime). Loaded from our
   own origin (CSP script-src 'self'). */
(function () {
  "use strict";
  var lang = document.documentElement.lang || undefined;
  // The browser's time zone (an IANA name) in a cookie, so that the pages the server
  // writes show dates in it (autoport.web.locale.TIME_ZONE_COOKIE); the first page
  // before it is set shows the locale's region's zone, named.
  var zone = (window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone) || "";
  if (/^[A-Za-z0-9_+\-\/]{1,63}$/.test(zone) &&
      document.cookie.split("; ").indexOf("autoport_tz=" + zone) < 0) {
    document.cookie = "autoport_tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax" +
      (window.location.protocol === "https:" ? "; Secure" : "");
  }
  function formatter(options) {
    try { return new Intl.DateTimeFormat(lang, options); } catch (e) { return new Intl.DateTimeFormat(undefined, options); }
  }
  var clock = formatter({ hour: "2-digit", minute: "2-digit" });
  var clockSeconds = formatter({ hour: "2-digit", minute: "2-digit", second: "2-digit" });
  var day = formatter({ day: "numeric", month: "short" });
  var full = formatter({ dateStyle: "medium", timeStyle: "medium" });
  var utc = formatter({ dateStyle: "medium", timeStyle: "medium", timeZone: "UTC" });
  var utcDay = formatter({ day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
  var number = new Intl.NumberFormat(lang, { maximumFractionDigits: 3 });
  // uPlot's own axis writes US dates (11/27, 8:48pm): the charts use these instead, in
  // the page's language and the reader's zone; hovering a chart shows the point's time
  // there and in UTC (its title).
  window.autoportTime = {
    // The time scale: a single point gets a minute either side (uPlot would span years).
    scale: function (u, min, max) { return min === max ? [min - 60, max + 60] : [min, max]; },
    // Labels at least this far apart (px): a clock time is wider than uPlot's default.
    space: 80,
    // A time axis's labels (x in seconds): clock times within two days (the date where
    // the day changes), dates beyond; `days` (the usage charts' UTC days): dates in UTC.
    axis: function (days) {
      return function (u, splits) {
        var span = splits.length > 1 ? splits[splits.length - 1] - splits[0] : 0;
        var previous = null;
        var said = null;
        return splits.map(function (x) {
          if (x === null || x === undefined) { return ""; }
          var when = new Date(x * 1000);
          var label;
          if (days) {
            label = utcDay.format(when);
          } else if (span > 2 * 86400) {
            label = day.format(when);
          } else {
            label = (span < 120 ? clockSeconds : clock).format(when);
            var date = day.format(when);
            if (previous !== null && previous !== date) { label = date + " " + label; }
            previous = date;
          }
          // Ticks closer than the labels' resolution: each label once.
          if (label === said) { return ""; }
          said = label;
          return label;
        });
      };
    },
    // The x series' value in a legend: the day (UTC) or the instant in the reader's zone.
    value: function (days) {
      var written = days ? utcDay : full;
      return function (u, x) { return x === null || x === undefined ? "–" : written.format(new Date(x * 1000)); };
    },
    // A uPlot hook: the hovered point's time (local and UTC) and value as the title.
    hover: function (days) {
      return function (u) {
        var i = u.cursor.idx;
        if (i === null || i === undefined) { u.over.removeAttribute("title"); return; }
        var when = new Date(u.data[0][i] * 1000);
        var values = [];
        for (var s = 1; s < u.series.length; s++) {
          var value = u.data[s][i];
          if (value !== null && value !== undefined) {
            values.push((u.series.length > 2 ? u.series[s].label + ": " : "") + number.format(value));
          }
        }
        var time = days ? utcDay.format(when) : full.format(when) + " (" + utc.format(when) + " UTC)";
        u.over.setAttribute("title", time + (values.length ? " · " + values.join(", ") : ""));
      };
    }
  };
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy]");
    if (!button) { return; }
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) { return; }
    event.preventDefault();
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      var done = button.getAttribute("data-copied") || "Copied";
      var label = button.textContent;
      button.textContent = done;
      setTimeout(function () { button.textContent = label; }, 2000);
    });
  });
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); }
  }, true);
  document.querySelectorAll("[data-copy]").forEach(function (button) { button.hidden = false; });
  document.querySelectorAll("[data-live]").forEach(function (target) {
    // A live view (console/live.py): each event named data-live-event carries the
    // view's new HTML (rendered and escaped by the server's templates). `end` means
    // the session is gone: stop instead of letting EventSource reconnect.
    if (!window.EventSource) { return; }
    var source = new window.EventSource(target.getAttribute("data-live"));
    var fallback = target.parentNode.querySelector("[data-live-fallback]");
    if (fallback) { fallback.hidden = true; }
    source.addEventListener(target.getAttribute("data-live-event"), function (event) {
      target.innerHTML = event.data;
      target.setAttribute("data-live-seen", event.lastEventId);
    });
    source.addEventListener("end", function () {
      source.close();
      target.setAttribute("data-live-state", "ended");
      if (fallback) {
        fallback.textContent = target.getAttribute("data-live-ended");
        fallback.hidden = false;
      }
    });
    target.setAttribute("data-live-state", "open");
  });
  document.querySelectorAll("input[data-filter]").forEach(function (input) {
    // Filters a long checkbox list as one types (the catalog picker).
    var list = document.getElementById(input.getAttribute("data-filter"));
    if (!list) { return; }
    input.hidden = false;
    input.addEventListener("input", function () {
      var wanted = input.value.trim().toLowerCase();
      list.querySelectorAll("fieldset").forEach(function (group) {
        var shown = 0;
        group.querySelectorAll("label").forEach(function (label) {
          var hit = !wanted || label.textContent.toLowerCase().indexOf(wanted) >= 0 ||
            (label.getAttribute("data-name") || "").indexOf(wanted) >= 0;
          label.hidden = !hit;
          if (hit) { shown += 1; }
        });
        group.hidden = shown === 0;
      });
    });
  });
}());
