// Starts Swagger UI on /api/docs (a served file: the pages' CSP allows no inline script). No deep
// links: Swagger UI draws them as links inside each operation's button (nested interactive
// controls). The servers' select gets the name Swagger UI leaves out, whenever it draws it.
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: false,
});
(function () {
  var root = document.getElementById('swagger-ui');
  if (!root || !window.MutationObserver) return;
  function name() {
    var s = root.querySelector('select#servers:not([aria-label])');
    if (s) s.setAttribute('aria-label', 'Server');
  }
  new MutationObserver(name).observe(root, { childList: true, subtree: true });
})();
