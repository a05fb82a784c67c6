/* The script of every console page (progressive enhancement: every page works
   without it). Copy buttons: <button data-copy="element-id">. Confirmations:
   <form data-confirm="question">. Live views:
   <div data-live="events-url" data-live-event="name">. Loaded from our own origin (CSP script-src 'self'). */
(function () {
  "use strict";
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
