// autoport's accessibility fixes to the vendored Swagger UI's markup (with a11y.css;
// tests/api/test_docs_browser.py runs axe-core on the page). Swagger UI renders with
// React and redraws parts of the page as the reader opens them, so the fixes are applied
// again after every change of the document.
"use strict";
(function () {
  function fix(root) {
    // Headings skip levels (the tags' h3 right under the title's h1, an operation's h4
    // under them): the levels assistive technology announces, one step at a time.
    root.querySelectorAll("h3.opblock-tag, .models > h4").forEach(function (heading) {
      heading.setAttribute("aria-level", "2");
    });
    root.querySelectorAll(".opblock h4, .opblock h3:not(.opblock-tag)").forEach(
      function (heading) { heading.setAttribute("aria-level", "3"); });
    root.querySelectorAll(".opblock h5").forEach(function (heading) {
      heading.setAttribute("aria-level", "4");
    });
    // The Authorize dialog: a dialog with a name, its close button named, its headings
    // under the dialog's own.
    root.querySelectorAll(".modal-ux:not([role])").forEach(function (modal) {
      modal.setAttribute("role", "dialog");
      modal.setAttribute("aria-modal", "true");
      modal.setAttribute("aria-label", "Available authorizations");
    });
    root.querySelectorAll(".modal-ux-header > h3").forEach(function (heading) {
      heading.setAttribute("aria-level", "2");
    });
    root.querySelectorAll(".modal-ux-content h4").forEach(function (heading) {
      heading.setAttribute("aria-level", "3");
    });
    root.querySelectorAll("button.close-modal:not([aria-label])").forEach(function (button) {
      button.setAttribute("aria-label", "Close");
    });
    // The title and description sit outside Swagger UI's <main>: a banner landmark.
    var info = root.querySelector(".information-container");
    if (info && !info.hasAttribute("role")) { info.setAttribute("role", "banner"); }
    // Selects Swagger UI leaves without a label (response and request content types,
    // the servers): their nearest label text, or what they choose.
    root.querySelectorAll("select:not([aria-label]):not([aria-labelledby])").forEach(
      function (select) {
        if (select.id && document.querySelector('label[for="' + select.id + '"]')) { return; }
        var label = select.closest("label");
        if (label && label.textContent.trim()) { return; }
        var near = select.closest("[class*='content-type'], .servers, .response-controls,"
          + " .opblock-section-header, .parameters-col_description");
        var text = near && near.querySelector("small, label, .response-control-media-type__title");
        select.setAttribute("aria-label",
          (text && text.textContent.trim()) || select.className.replace(/[-_]/g, " ") || "choice");
      });
  }
  window.addEventListener("DOMContentLoaded", function () {
    var root = document.getElementById("swagger-ui");
    fix(root);
    new MutationObserver(function () { fix(root); }).observe(root, {childList: true, subtree: true});
  });
})();
