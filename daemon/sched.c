/* The job queue: bounded (backpressure instead of unbounded memory) and
 * fair: each connection has its own FIFO, and free workers take the next
 * job from the connection after the one served last (round robin), so one
 * client with 10,000 jobs cannot starve another. */
#include "internal.h"

int sbd_sched_submit(sbd_server *srv, sbd_job *job) {
  bool worker_free = srv->running < srv->n_slots && srv->queued == 0;
  if (!worker_free && srv->queued >= srv->cfg->max_queue) return -1;
  sbd_conn *c = job->conn;
  job->prev = c->queued_tail;
  job->next = NULL;
  if (c->queued_tail) c->queued_tail->next = job;
  else c->queued_head = job;
  c->queued_tail = job;
  c->n_queued++;
  srv->queued++;
  return 0;
}

static int free_slot(sbd_server *srv) {
  for (int i = 0; i < srv->n_slots; i++)
    if (!srv->slot_busy[i]) return i;
  return -1;
}

/* Next connection with queued work, starting after the one served last. */
static sbd_conn *next_conn(sbd_server *srv) {
  sbd_conn *start = srv->rr_last && srv->rr_last->next ? srv->rr_last->next : srv->conns;
  sbd_conn *c = start;
  if (!c) return NULL;
  do {
    if (c->queued_head && !c->closing && !c->backlogged) return c; /* backlogged: conn.c */
    c = c->next ? c->next : srv->conns;
  } while (c != start);
  return NULL;
}

static void on_uid_wait(uv_timer_t *t) { sbd_sched_pump(t->data); }

void sbd_sched_pump(sbd_server *srv) {
  while (srv->running < srv->n_slots && srv->queued > 0 && !srv->draining) {
    /* Every uid leased or held until its last job's in-flight descriptors
     * are collected (runners/uids.c; milliseconds): the job stays queued. */
    if (sb_uids_waiting(srv->rt)) {
      uv_timer_start(&srv->uid_wait, on_uid_wait, 5, 0);
      return;
    }
    sbd_conn *c = next_conn(srv);
    int slot = free_slot(srv);
    if (!c || slot < 0) return;
    sbd_job *job = c->queued_head;
    sbd_conn_unlink_queued(c, job);
    srv->queued--;
    srv->rr_last = c;
    srv->slot_busy[slot] = true;
    srv->running++;
    sbd_job_start(job, slot);
  }
}

void sbd_sched_release(sbd_server *srv, int slot) {
  if (slot < 0 || slot >= srv->n_slots || !srv->slot_busy[slot]) return;
  srv->slot_busy[slot] = false;
  srv->running--;
}
