// The API reference at /docs: Swagger UI from web/vendor/swagger-ui (no CDN, no inline script), reading our
// own /openapi.json. The schema validator badge (a request to validator.swagger.io) is turned off.
window.SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
});
