/* Logging to stderr: one line per job at info level, text or JSON Lines. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* RFC 3339 UTC with milliseconds: 2026-11-24T03:14:20.123Z */
static void stamp(char *out, size_t cap) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char sec[24];
  strftime(sec, sizeof sec, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, cap, "%s.%03ldZ", sec, ts.tv_nsec / 1000000);
}

/* Seconds rounded to the millisecond, printed as such in JSON (no 0.30000000000000004). */
static json_object *seconds_json(double s) {
  char txt[32];
  snprintf(txt, sizeof txt, "%.3f", s);
  return json_object_new_double_s(strtod(txt, NULL), txt);
}

void sbd_log(sbd_server *srv, const char *level, const char *fmt, ...) {
  if (srv->cfg->quiet && strcmp(level, "info") == 0) return;
  char msg[1024], ts[32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  stamp(ts, sizeof ts);
  if (srv->cfg->log_json) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "time", json_object_new_string(ts));
    json_object_object_add(o, "level", json_object_new_string(level));
    json_object_object_add(o, "msg", json_object_new_string(msg));
    fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
  } else {
    fprintf(stderr, "%s surgeboxd %s: %s\n", ts, level, msg);
  }
}

void sbd_log_job(sbd_server *srv, const sbd_job *job, const char *status) {
  if (srv->cfg->quiet) return;
  char ts[32];
  stamp(ts, sizeof ts);
  const char *tc = job->req->exec.toolchain ? job->req->exec.toolchain : "-";
  if (srv->cfg->log_json) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "time", json_object_new_string(ts));
    json_object_object_add(o, "level", json_object_new_string("info"));
    json_object_object_add(o, "event", json_object_new_string("job"));
    json_object_object_add(o, "id", json_object_new_string(job->req->id_key));
    json_object_object_add(o, "conn", json_object_new_int64((int64_t)job->conn->serial));
    json_object_object_add(o, "uid", json_object_new_int64(job->conn->uid));
    json_object_object_add(o, "toolchain", json_object_new_string(tc));
    json_object_object_add(o, "status", json_object_new_string(status));
    json_object_object_add(o, "steps", json_object_new_int64((int64_t)job->step));
    json_object_object_add(o, "wall_s", seconds_json(job->wall_s));
    json_object_object_add(o, "cpu_s", seconds_json(job->cpu_s));
    if (job->wall_waiting[0]) json_object_object_add(o, "wall_waiting", json_object_new_string(job->wall_waiting));
    fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
  } else {
    fprintf(stderr, "%s surgeboxd info: job id=%s conn=%llu uid=%u toolchain=%s status=%s steps=%zu wall=%.3fs cpu=%.3fs%s%s\n",
            ts, job->req->id_key, (unsigned long long)job->conn->serial, (unsigned)job->conn->uid, tc, status,
            job->step, job->wall_s, job->cpu_s, job->wall_waiting[0] ? " wall_waiting=" : "", job->wall_waiting);
  }
}

/* The spawner (runners/spawner.c) restarted since we last looked: said once. */
void sbd_spawner_check(sbd_server *srv) {
  pid_t pid;
  const char *why;
  uint64_t n = sb_runtime_spawner(srv->rt, &pid, &why);
  if (n == srv->spawner_restarts_seen) return;
  srv->spawner_restarts_seen = n;
  sbd_log(srv, "warn", "spawner restarted (%llu so far; now pid %d): %s", (unsigned long long)n, (int)pid, why);
}
