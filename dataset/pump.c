#include "pump.h"
#include "cleanup.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t *interrupt_flag;
static void on_interrupt(int s) {
  (void)s;
  if (interrupt_flag) *interrupt_flag = 1;
}

void sbr_catch_interrupts(volatile sig_atomic_t *flag) {
  interrupt_flag = flag;
  signal(SIGINT, on_interrupt);
  signal(SIGTERM, on_interrupt);
}

/* A plain line at least every progress_interval seconds without a TTY (also
 * while no item finishes: a long item must not look like a hang), a redrawn
 * bar on a TTY. The ETA is a rate estimate and is labelled as one. */
/* The plan's seconds (p->cost): all, finished, sent (finished or in flight). */
typedef struct {
  double total, done, sent;
} plan_cost;

static void eta_of(const sbr_pump *p, const plan_cost *pc, size_t done, double el, double rate, char *eta, size_t n) {
  if (done == p->total) snprintf(eta, n, "done in %.0fs", el);
  else if (p->cost && pc->total > 0) {
    double left = pc->total - pc->done, worked = pc->done + (pc->sent - pc->done) / 2; /* in flight: half done */
    if (pc->done > 0 && el > 0 && worked > 0)
      snprintf(eta, n, "ETA ~%.0fs (the plan's cost per item at this run's speed)", left * el / worked);
    else
      snprintf(eta, n, "ETA ~%.0fs (the plan's cost per item, %.0f at once)", left / (p->parallel > 0 ? p->parallel : 1),
               p->parallel > 0 ? p->parallel : 1);
  } else if (done == 0) snprintf(eta, n, "ETA unknown (nothing finished yet)");
  else snprintf(eta, n, "ETA ~%.0fs (rate estimate)", (double)(p->total - done) / rate);
}

static void progress(const sbr_pump *p, const plan_cost *pc, size_t done, size_t inflight, size_t failed, double t0,
                     bool tty, double *last) {
  double now = sbu_now_s(), every = tty ? 0.2 : p->progress_interval > 0 ? p->progress_interval : 10;
  if (done < p->total && now - *last < every) return;
  *last = now;
  double el = now - t0, rate = el > 0 ? (double)done / el : 0;
  char eta[96];
  eta_of(p, pc, done, el, rate, eta, sizeof eta);
  if (tty) {
    int width = 30, fill = p->total ? (int)((size_t)width * done / p->total) : width;
    fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu  running %zu  failed %zu  %.1f/s  %s ", p->label, fill,
            "##############################", width - fill, "", done, p->total, inflight, failed, rate, eta);
    if (done == p->total) fputc('\n', stderr);
  } else {
    fprintf(stderr, "%s: %zu/%zu done, %zu running, %zu failed, %.0fs elapsed, %.1f/s, %s\n", p->label, done,
            p->total, inflight, failed, el, rate, eta);
  }
}

static void went_idle(const sbr_pump *p, bool *dirty) {
  if (*dirty && p->idle) p->idle(p->ctx);
  *dirty = false;
}

static int send_one(sbc_conn *c, const sbr_pump *p, size_t i, json_object *req) {
  char id[32];
  snprintf(id, sizeof id, "%zu", i);
  json_object_object_add(req, "id", json_object_new_string(id));
  if (p->fleet) return sbc_fleet_submit(p->fleet, req); /* it owns req */
  int rc = sbc_send(c, req);
  json_object_put(req);
  return rc;
}

static int dump_all(const sbr_pump *p) {
  for (size_t i = 0; i < p->total; i++) {
    json_object *req = p->make(i, p->ctx);
    if (!req) continue;
    char id[32];
    snprintf(id, sizeof id, "%zu", i);
    json_object_object_add(req, "id", json_object_new_string(id));
    fprintf(p->dump, "%s\n", json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
    json_object_put(req);
  }
  return fflush(p->dump) == 0 && !ferror(p->dump) ? 0 : -1;
}

int sbr_pump_run(sbc_conn *c, const sbr_pump *p) {
  if (p->dump) return dump_all(p);
  size_t next = 0, inflight = 0, done = 0, failed = 0;
  double t0 = sbu_now_s(), last = sbu_now_s(), last_checkpoint = sbu_now_s();
  bool tty = isatty(2);
  int rc = 0;
  plan_cost pc = {0, 0, 0};
  if (p->fleet) sbc_fleet_trim(p->fleet, p->trim);
  bool said = false, dirty = false; /* dirty: an answer was handed on since idle was last called */
  char fatal[700] = "";
  for (size_t i = 0; p->cost && i < p->total; i++) pc.total += p->cost(i, p->ctx);
  for (;;) {
    while (inflight < p->window && next < p->total && !*p->interrupted) {
      json_object *req = p->make(next, p->ctx);
      if (!req) { /* nothing to run for this one */
        if (p->cost) pc.total -= p->cost(next, p->ctx);
        next++;
        done++;
        continue;
      }
      if (p->cost) pc.sent += p->cost(next, p->ctx);
      if (send_one(c, p, next++, req) < 0) {
        rc = -1;
        break;
      }
      inflight++;
    }
    if (rc || inflight == 0 || *p->interrupted) break;
    if (p->cost && !said) { /* the plan's ETA at once, not after the first interval */
      double never = -1e18;
      progress(p, &pc, done, inflight, failed, t0, tty, &never);
      said = true;
    }
    /* wait in slices, so that Ctrl-C is noticed while long jobs run */
    SBU_AUTOPUT json_object *resp = NULL;
    const char *line = NULL;
    SBU_AUTOFREE char *fleet_line = NULL; /* a fleet's answer's line */
    size_t line_len = 0;
    int wait_ms = dirty && p->idle ? SBR_PUMP_IDLE_MS : 200;
    if (p->fleet) {
      int got = sbc_fleet_next_line(p->fleet, wait_ms, &resp, &fleet_line, &line_len, fatal, sizeof fatal);
      line = fleet_line;
      if (got < 0) {
        fprintf(stderr, "%s: %s\n", p->label, fatal);
        rc = -1;
        break;
      }
      if (got == 0) {
        went_idle(p, &dirty);
        progress(p, &pc, done, inflight, failed, t0, tty, &last);
        continue;
      }
    } else if (!sbc_has_line(c)) {
      struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
      if (poll(&pfd, 1, wait_ms) <= 0) {
        went_idle(p, &dirty);
        progress(p, &pc, done, inflight, failed, t0, tty, &last);
        continue;
      }
    }
    if (!p->fleet) resp = p->trim ? sbc_recv_trimmed(c, &line, &line_len) : sbc_recv_line(c, &line, &line_len);
    if (!resp) {
      rc = -1;
      break;
    }
    sbc_result r;
    sbc_result_of(resp, &r); /* the one parse of this answer */
    size_t i = r.id && r.id[0] ? strtoul(r.id, NULL, 10) : p->total; /* "": id null, an answer to no request */
    if (i < p->total && r.is_error && r.error_code && !strcmp(r.error_code, "busy")) { /* the queue was full: again, a bit later */
      sbc_result_free(&r);
      usleep(100000);
      json_object *req = p->make(i, p->ctx);
      if (req && send_one(c, p, i, req) < 0) rc = -1;
      if (!req) inflight--;
      if (rc) break;
      continue;
    }
    inflight--;
    if (i < p->total) {
      char why[512];
      if (p->failures && (p->failure_of ? p->failure_of : sbr_failure_of)(&r, why, sizeof why))
        sbr_failures_add(p->failures, why);
      if (p->done_line ? p->done_line(i, &r, resp, line, line_len, p->ctx) : p->done(i, &r, resp, p->ctx)) failed++;
      dirty = true;
      if (p->cost) pc.done += p->cost(i, p->ctx);
      done++;
    }
    sbc_result_free(&r);
    if (p->checkpoint && sbu_now_s() - last_checkpoint > 10) {
      p->checkpoint(p->ctx);
      last_checkpoint = sbu_now_s();
    }
    progress(p, &pc, done, inflight, failed, t0, tty, &last);
  }
  went_idle(p, &dirty);
  if (p->checkpoint) p->checkpoint(p->ctx);
  if (rc && !p->fleet) fprintf(stderr, "%s: the daemon went away\n", p->label);
  if (rc && p->failures)
    sbr_failures_add(p->failures, fatal[0] ? fatal : "lost: the connection to the daemon ended with requests in flight");
  return rc || *p->interrupted ? -1 : 0;
}
