// Starts Swagger UI on /api/docs (a served file: the pages' CSP allows no inline script).
window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true });
