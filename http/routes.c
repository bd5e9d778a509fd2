/* Which path does what. /run_code and /common_evaluate_batch are SandboxFusion's; /v1/ping, /v1/jobs
 * (the native exec request, for any language's HTTP client), /metrics
 * (the daemon's OpenMetrics text) and /v1/health (the one tokenless path,
 * for orchestrators' probes) are surgebox's own. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The path of the request target, without its query. */
static bool path_is(const sbh_conn *c, const char *path) {
  size_t n = strlen(path);
  if (!c->url || c->url_len < n || memcmp(c->url, path, n) != 0) return false;
  return c->url_len == n || c->url[n] == '?';
}

/* GET /v1/health without a body: the only request served without the
 * token (Kubernetes probes cannot send one). Its answer says "ok" and
 * nothing else, so it tells an unauthenticated client no more than that
 * the port is a live surgebox. */
bool sbh_route_is_public(const sbh_conn *c, bool has_body) {
  return (enum http_method)c->parser.method == HTTP_GET && !has_body && path_is(c, "/v1/health");
}

/* The body as one JSON object, or an answer was sent (NULL). */
static json_object *body_object(sbh_conn *c) {
  if (!c->body_len) {
    sbh_send_error(c, 422, "the body must be a JSON object");
    return NULL;
  }
  json_tokener *tok = json_tokener_new_ex(64);
  if (!tok) {
    sbh_send_error(c, 500, "out of memory");
    return NULL;
  }
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
  json_object *o = json_tokener_parse_ex(tok, c->body, (int)c->body_len);
  enum json_tokener_error e = json_tokener_get_error(tok);
  size_t used = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (e != json_tokener_success || used != c->body_len || !json_object_is_type(o, json_type_object)) {
    if (o) json_object_put(o);
    sbh_send_error(c, 422, "the body must be one JSON object (%s)",
                   e != json_tokener_success ? json_tokener_error_desc(e) : "text after it, or not an object");
    return NULL;
  }
  return o;
}

static void run_code(sbh_conn *c) {
  json_object *body = body_object(c);
  if (!body) return;
  json_object *native = NULL, *ctx = NULL;
  double budget = 0;
  if (sbh_run_code_request(c, body, &native, &ctx, &budget) == 0) {
    sbh_req_submit(c, native, sbh_run_code_answer, ctx, budget);
    json_object_put(native);
  }
  json_object_put(body);
}

/* /v1/jobs: the native answer as it is, the client's id given back; the
 * daemon's refusal as its HTTP status. */
static json_object *jobs_answer(const sbh_server *s, json_object *native, json_object *ctx, int *http_status) {
  (void)s;
  *http_status = 200;
  if (!native) {
    *http_status = 503;
    return sbh_detail_answer("the daemon is shutting down", NULL);
  }
  const char *code = NULL;
  char m[SBH_ERR_MAX];
  if (sbh_refusal(native, &code, m, sizeof m) && code)
    *http_status = !strcmp(code, "busy") ? 503 : !strcmp(code, "internal") ? 500 : 400;
  json_object *id = NULL;
  json_object_object_get_ex(ctx, "id", &id);
  json_object_object_add(native, "id", json_object_get(id));
  return json_object_get(native);
}

static void jobs(sbh_conn *c) {
  json_object *body = body_object(c);
  if (!body) return;
  json_object *t = NULL, *ctx = json_object_new_object();
  if (json_object_object_get_ex(body, "type", &t) && strcmp(json_object_get_string(t), "exec") != 0) {
    sbh_send_error(c, 400, "/v1/jobs takes exec requests only (\"type\": \"exec\" or no type)");
    json_object_put(body);
    json_object_put(ctx);
    return;
  }
  json_object *id = NULL;
  json_object_object_get_ex(body, "id", &id);
  json_object_object_add(ctx, "id", json_object_get(id));
  json_object_object_add(body, "type", json_object_new_string("exec"));
  sbh_req_submit(c, body, jobs_answer, ctx, 0);
  json_object_put(body);
}

static void evaluate_batch(sbh_conn *c) {
  json_object *body = body_object(c);
  if (!body) return;
  sbh_evaluate_batch(c, body);
  json_object_put(body);
}

static void metrics(sbh_conn *c) {
  char *text = c->srv->d.metrics(c->srv->d.arg);
  if (!text) {
    sbh_send_error(c, 500, "out of memory");
    return;
  }
  sbh_send(c, 200, "application/openmetrics-text; version=1.0.0; charset=utf-8", text, strlen(text), NULL);
}

static void ping(sbh_conn *c) { sbh_send(c, 200, "application/json", strdup("\"pong\""), 6, NULL); }
static void health(sbh_conn *c) { sbh_send(c, 200, "application/json", strdup("\"ok\""), 4, NULL); }

static const struct {
  const char *path;
  enum http_method method;
  void (*serve)(sbh_conn *c);
} routes[] = {
    {"/v1/ping", HTTP_GET, ping},
    {"/v1/health", HTTP_GET, health},
    {"/metrics", HTTP_GET, metrics},
    {"/run_code", HTTP_POST, run_code},
    {"/common_evaluate_batch", HTTP_POST, evaluate_batch},
    {"/v1/jobs", HTTP_POST, jobs},
};

void sbh_route(sbh_conn *c) {
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
    if (!path_is(c, routes[i].path)) continue;
    if ((enum http_method)c->parser.method != routes[i].method)
      sbh_send_error(c, 405, "method not allowed on this path");
    else
      routes[i].serve(c);
    return;
  }
  sbh_send_error(c, 404, "no such path: try POST /run_code, POST /common_evaluate_batch, GET /v1/ping, GET /v1/health, "
                         "POST /v1/jobs or GET /metrics");
}
