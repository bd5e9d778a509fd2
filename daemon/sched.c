/* The job queue: bounded (backpressure instead of unbounded memory) and
 * fair: each connection has its own FIFO, and free workers take the next
 * job from the connection after the one served last (round robin), so one
 * client with 10,000 jobs cannot starve another.
 *
 * A worker slot is free once its job ended, but ready only once the
 * runtime has cleaned its cgroup (torn down the job's mount namespace,
 * killed leftovers, reclaimed its page cache: up to seconds, on the slot's
 * own thread). A queued job goes to a free slot that is ready; when none is,
 * it stays queued until the runtime's slot-ready fd says one is. The loop
 * never waits for a slot.
 *
 * Which slot: a connection's jobs go back to the slot its last job used
 * (slot_last_conn) and wait for its cleaning rather than take a slot
 * another connection used last. So a client whose jobs leave seconds of
 * teardown pays for it with its own queue time, not with its neighbour's:
 * without this, its next job took the neighbour's slot the moment that
 * neighbour's job ended, and the neighbour's next job waited for the
 * teardown (a worker is a slot, and a slot is only free once clean). A
 * connection with no free slot of its own takes a slot never used, else
 * one another connection used last. */
#include "internal.h"

int sbd_sched_submit(sbd_server *srv, sbd_job *job) {
  /* Jobs a free worker will take once its slot is clean (a few ms after
   * the previous job) are not the queue's: the bound is on the rest, as
   * when a free worker started its job at once. */
  size_t free_workers = srv->running < srv->n_slots ? (size_t)(srv->n_slots - srv->running) : 0;
  if (srv->queued >= srv->cfg->max_queue + free_workers) return -1;
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

/* The queue's unlink (sbd_sched_submit links): a connection's queued job out
 * of its FIFO, started or dropped. Kept here, the queue's, so that the
 * scheduler calls nothing of the connection. */
void sbd_conn_unlink_queued(sbd_conn *c, sbd_job *j) {
  if (j->prev) j->prev->next = j->next;
  else c->queued_head = j->next;
  if (j->next) j->next->prev = j->prev;
  else c->queued_tail = j->prev;
  j->prev = j->next = NULL;
  c->n_queued--;
}

/* A free, ready slot for c's next job, or -1: none, or c's own last slot is
 * still being cleaned (it waits for that one). */
static int pick_slot(sbd_server *srv, const sbd_conn *c) {
  int other = -1;
  bool own_pending = false;
  for (int i = 0; i < srv->n_slots; i++) {
    if (srv->slot_busy[i]) continue;
    bool own = srv->slot_last_conn[i] == c->serial;
    bool ready = sb_runtime_slot_ready(srv->rt, i);
    if (own && ready) return i;
    if (own) own_pending = true;
    else if (ready && (other < 0 || (srv->slot_last_conn[i] == 0 && srv->slot_last_conn[other] != 0))) other = i;
  }
  return own_pending ? -1 : other;
}

/* Next connection with queued work that can start it, starting after the
 * one served last. */
static sbd_conn *next_conn(sbd_server *srv, int *slot) {
  sbd_conn *start = srv->rr_last && srv->rr_last->next ? srv->rr_last->next : srv->conns;
  sbd_conn *c = start;
  if (!c) return NULL;
  do {
    if (c->queued_head && !c->closing && !c->backlogged && (*slot = pick_slot(srv, c)) >= 0) /* backlogged: conn.c */
      return c;
    c = c->next ? c->next : srv->conns;
  } while (c != start);
  return NULL;
}

static void on_uid_wait(uv_timer_t *t) { sbd_sched_pump(t->data); }

/* A pump in ms, unless one is already due (the same timer as the uids'
 * wait): a borrower waiting for what a lent slot is getting ready. */
void sbd_sched_pump_soon(sbd_server *srv, uint64_t ms) {
  if (!srv->draining && !uv_is_active((uv_handle_t *)&srv->uid_wait)) uv_timer_start(&srv->uid_wait, on_uid_wait, ms, 0);
}

/* Idle slots lent to running jobs that asked (a cases step's next case,
 * issue 38), only while nothing is queued: a queued job keeps its claim on
 * every slot. A slot is lent for one case and given back when it ends, so a
 * job arriving later waits at most for one case's run. Borrowers take turns
 * (the one served goes to the tail). */
static void lend(sbd_server *srv) {
  for (int i = 0; i < srv->n_slots && srv->borrowers && srv->queued == 0 && !srv->draining; i++) {
    if (srv->slot_busy[i] || !sb_runtime_slot_ready(srv->rt, i) || sb_uids_waiting(srv->rt)) continue;
    sbd_borrower *b = srv->borrowers;
    sbd_sched_unborrow(srv, b);
    sbd_sched_borrow(srv, b); /* to the tail */
    srv->slot_busy[i] = true; /* busy while lent: status and metrics count it */
    srv->running++;
    if (!b->take(b->arg, i)) { /* not this slot (b unborrows itself when it wants none) */
      srv->slot_busy[i] = false;
      srv->running--;
    }
  }
}

static void pump_once(sbd_server *srv) {
  while (srv->running < srv->n_slots && srv->queued > 0 && !srv->draining) {
    /* Every uid leased or held until its last job's in-flight descriptors
     * are collected (runners/uids.c; milliseconds): the job stays queued. */
    if (sb_uids_waiting(srv->rt)) {
      uv_timer_start(&srv->uid_wait, on_uid_wait, 5, 0);
      return;
    }
    int slot = -1;
    sbd_conn *c = next_conn(srv, &slot);
    if (!c) return;
    srv->slot_last_conn[slot] = c->serial;
    sbd_job *job = c->queued_head;
    sbd_conn_unlink_queued(c, job);
    srv->queued--;
    srv->rr_last = c;
    srv->slot_busy[slot] = true;
    srv->running++;
    srv->sched_calls.start(job, slot);
  }
  lend(srv);
}

/* A job's start or a lent case may end synchronously and pump again: that
 * pump is done by the one running, after it (never nested). */
void sbd_sched_pump(sbd_server *srv) {
  if (srv->pumping) {
    srv->repump = true;
    return;
  }
  srv->pumping = true;
  do {
    srv->repump = false;
    pump_once(srv);
  } while (srv->repump);
  srv->pumping = false;
}

void sbd_sched_borrow(sbd_server *srv, sbd_borrower *b) {
  if (b->linked) return;
  b->linked = true;
  b->next = NULL;
  b->prev = NULL;
  if (!srv->borrowers) {
    srv->borrowers = b;
    return;
  }
  sbd_borrower *t = srv->borrowers;
  while (t->next) t = t->next;
  t->next = b;
  b->prev = t;
}

void sbd_sched_unborrow(sbd_server *srv, sbd_borrower *b) {
  if (!b->linked) return;
  if (b->prev) b->prev->next = b->next;
  else srv->borrowers = b->next;
  if (b->next) b->next->prev = b->prev;
  b->prev = b->next = NULL;
  b->linked = false;
}

void sbd_sched_give_back(sbd_server *srv, int slot) {
  sbd_sched_release(srv, slot);
  sbd_sched_pump(srv);
}

void sbd_sched_release(sbd_server *srv, int slot) {
  if (slot < 0 || slot >= srv->n_slots || !srv->slot_busy[slot]) return;
  srv->slot_busy[slot] = false;
  srv->running--;
}

bool sbd_sched_slot_wait(sbd_server *srv, sbd_job *job) {
  if (job->slot < 0 || sb_runtime_slot_ready(srv->rt, job->slot)) return true;
  srv->slot_waiter[job->slot] = job; /* the slot is the job's: nobody else waits on it */
  return false;
}

bool sbd_sched_forget_waiter(sbd_server *srv, sbd_job *job) {
  if (job->slot < 0 || !srv->slot_waiter || srv->slot_waiter[job->slot] != job) return false;
  srv->slot_waiter[job->slot] = NULL;
  return true;
}

/* A slot's cleaning ended: its waiting step first (it holds the slot), then
 * queued jobs on whatever is free and ready. */
static void on_slot_ready(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  sbd_server *srv = h->data;
  sb_runtime_slot_ready_drain(srv->rt);
  for (int i = 0; i < srv->n_slots; i++) {
    sbd_job *job = srv->slot_waiter[i];
    if (job && sb_runtime_slot_ready(srv->rt, i)) {
      srv->slot_waiter[i] = NULL;
      srv->sched_calls.slot_ready(job);
    }
  }
  sbd_sched_pump(srv);
}

void sbd_sched_start(sbd_server *srv, sbd_sched_calls calls) {
  srv->sched_calls = calls;
  int fd = sb_runtime_slot_ready_fd(srv->rt);
  if (fd < 0 || uv_poll_init(&srv->loop, &srv->slot_ready, fd) < 0) return;
  srv->slot_ready.data = srv;
  uv_poll_start(&srv->slot_ready, UV_READABLE, on_slot_ready);
  uv_unref((uv_handle_t *)&srv->slot_ready); /* waiting jobs keep the daemon running, not this */
  srv->slot_ready_on = true;
}

void sbd_sched_stop(sbd_server *srv) {
  if (!srv->slot_ready_on) return;
  uv_close((uv_handle_t *)&srv->slot_ready, NULL);
  srv->slot_ready_on = false;
}
