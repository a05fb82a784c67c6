// Starts Swagger UI on the docs page. A file of its own (not inline) so that the page's
// Content-Security-Policy can forbid inline scripts.
"use strict";
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    // Deep links put a link inside each operation's button (axe: nested-interactive).
    deepLinking: false,
    persistAuthorization: false,
    showExtensions: true,
    // The default validator badge would load an image from validator.swagger.io.
    validatorUrl: null,
    oauth2RedirectUrl: new URL(root.dataset.oauth2Redirect, document.baseURI).href,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
