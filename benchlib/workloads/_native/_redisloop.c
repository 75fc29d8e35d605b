/* Operations on Redis, a chunk at a time, in C over hiredis: a table as Redis holds one
 * for benchlib (each record a string key, the table's keys in a sorted set, its index,
 * for scans) read and written by key — the operations of kv's run loops, which this
 * loop serves (owned by no workload: benchlib/workloads/_native/).
 *
 * The twin of the loops over libpq and libmariadb (_pgloop.c): the driver hands over a
 * chunk of operations (a Plan: the workload's codes and argument tuples, each turned
 * once into its commands in RESP, the Redis protocol) and the loop sends, awaits and
 * times each of them without the GIL until the chunk ends, the second in progress
 * ends, the paced schedule passes the step's end, or the connection is lost (_loop.h:
 * the clock, the outcomes, the paced loop). The commands and the statuses are those of
 * kv's bindings/redis.py:
 *
 *   READ    GET k                                  OK, EMPTY (nil)
 *   INSERT  MULTI; SET k v NX; ZADD idx 0 k; EXEC  OK, ERROR (the key was there)
 *   DELETE  MULTI; DEL k; ZREM idx k; EXEC         OK, EMPTY (no such key)
 *   UPDATE  SET k v XX                             OK, EMPTY (nil)
 *   SCAN    ZRANGEBYLEX idx [k + LIMIT 0 n, then MGET of the keys it gave (if any)
 *
 * an error reply is an ERROR. Conn.run drives one connection, blocking (a thread per
 * connection, paced or not); run_many drives all of a process's connections from one
 * thread with poll(), each a closed loop, as redis-benchmark's event loop does
 * (_muxconn.h, shared with the SQL loops).
 */
#define LOOP_NAME "_redisloop"
#include "_loop.h"

#include <hiredis/hiredis.h>

/* the operations by code (KINDS in the module, by these names) */
enum { K_READ, K_INSERT, K_DELETE, K_UPDATE, K_SCAN, NKINDS };
static const char *const redis_kinds[NKINDS + 1] = {"READ", "INSERT", "DELETE", "UPDATE", "SCAN", NULL};

/* ------------------------------------------------------------------ Plan */

typedef struct {
    PyObject_HEAD
    PLAN_OUTCOMES         /* no compound operation: in1, in2 NULL */
    char *buf;            /* every operation's commands, one after the other */
    size_t *off;          /* operation i's are buf[off[i] .. off[i + 1]) */
    size_t len, cap;
} Plan;

static void plan_dealloc(Plan *p) {
    free(p->buf), free(p->off);
    outcomes_free((PlanHead *)p);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static int put(Plan *p, const char *s, size_t n) {
    if (p->len + n > p->cap) {
        size_t cap = (p->cap + n) * 2;
        char *b = realloc(p->buf, cap);
        if (!b) return -1;
        p->buf = b, p->cap = cap;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    return 0;
}

/* one command: *argc then $len and each argument */
static int put_cmd(Plan *p, int argc, const char **argv, const Py_ssize_t *lens) {
    char head[32];
    if (put(p, head, (size_t)snprintf(head, sizeof head, "*%d\r\n", argc))) return -1;
    for (int j = 0; j < argc; j++)
        if (put(p, head, (size_t)snprintf(head, sizeof head, "$%zd\r\n", lens[j]))
            || put(p, argv[j], (size_t)lens[j]) || put(p, "\r\n", 2))
            return -1;
    return 0;
}

/* a key or value: bytes, or str as UTF-8 */
static const char *text_arg(PyObject *o, Py_ssize_t *n) {
    if (PyBytes_Check(o)) {
        *n = PyBytes_GET_SIZE(o);
        return PyBytes_AS_STRING(o);
    }
    if (PyUnicode_Check(o)) return PyUnicode_AsUTF8AndSize(o, n);
    PyErr_SetString(PyExc_TypeError, "keys and values must be str or bytes");
    return NULL;
}

/* CMD(lengths, arguments…): one command of literal arity into the plan */
#define CMD(L, ...) put_cmd(p, sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), \
                            (const char *[]){__VA_ARGS__}, (const Py_ssize_t[])L)
#define A(...) {__VA_ARGS__}

/* an operation's commands: its key, and `arg` (NULL for read and delete) its value
 * (insert, update) or its scan's length; idx: the sorted set of the table's keys */
static int put_op(Plan *p, int kind, const char *k, Py_ssize_t nk, PyObject *arg, const char *idx,
                  Py_ssize_t nidx) {
    Py_ssize_t nv = 0;
    const char *v = NULL;
    char num[24], lk[nk + 2];
    if (kind == K_SCAN) {
        long n = PyLong_AsLong(arg);
        if (n == -1 && PyErr_Occurred()) return -1;
        v = num, nv = snprintf(num, sizeof num, "%ld", n);
        lk[0] = '[';
        memcpy(lk + 1, k, (size_t)nk);
    } else if (arg && !(v = text_arg(arg, &nv))) {
        return -1;
    }
    switch (kind) {
    case K_READ: return CMD(A(3, nk), "GET", k);
    case K_UPDATE: return CMD(A(3, nk, nv, 2), "SET", k, v, "XX");
    case K_SCAN: return CMD(A(11, nidx, nk + 1, 1, 5, 1, nv), "ZRANGEBYLEX", idx, lk, "+", "LIMIT", "0", v);
    case K_INSERT:
        return put(p, "*1\r\n$5\r\nMULTI\r\n", 15) || CMD(A(3, nk, nv, 2), "SET", k, v, "NX")
            || CMD(A(4, nidx, 1, nk), "ZADD", idx, "0", k) || put(p, "*1\r\n$4\r\nEXEC\r\n", 14) ? -1 : 0;
    default:
        return put(p, "*1\r\n$5\r\nMULTI\r\n", 15) || CMD(A(3, nk), "DEL", k)
            || CMD(A(4, nidx, nk), "ZREM", idx, k) || put(p, "*1\r\n$4\r\nEXEC\r\n", 14) ? -1 : 0;
    }
}

/* the keys' columns (key_parts in workloads/kv/plan.py): prefix, hex digits, zeros
 * after them, the scrambled key numbers (uint64) */
typedef struct {
    const char *prefix;
    Py_ssize_t np;
    int digits, pad;
    Py_buffer nums;
    PyObject *values, *scan_n;
} cols_t;

/* operation i of the columns: its key made as key_strings makes it */
static int put_col(Plan *p, Py_ssize_t i, int kind, cols_t *c, const char *idx, Py_ssize_t nidx) {
    char k[c->np + c->digits + c->pad + 1];
    uint64_t x = ((const uint64_t *)c->nums.buf)[i];
    memcpy(k, c->prefix, (size_t)c->np);
    for (int d = c->digits - 1; d >= 0; d--, x >>= 4) k[c->np + d] = "0123456789abcdef"[x & 15];
    memset(k + c->np + c->digits, '0', (size_t)c->pad);
    PyObject *arg = kind == K_SCAN ? c->scan_n
        : kind == K_INSERT || kind == K_UPDATE ? PySequence_Fast_GET_ITEM(c->values, i) : NULL;
    return put_op(p, kind, k, c->np + c->digits + c->pad, arg, idx, nidx);
}

/* operation i as a tuple: (key,) for read and delete, (key, value) for insert and
 * update, (key, n) for scan */
static int put_tuple(Plan *p, int kind, PyObject *a, const char *idx, Py_ssize_t nidx) {
    static const Py_ssize_t want[NKINDS] = {1, 2, 1, 2, 2};
    Py_ssize_t nk;
    if (!PyTuple_Check(a) || PyTuple_GET_SIZE(a) < want[kind]) {
        PyErr_SetString(PyExc_ValueError, "an operation's arguments: a tuple (key[, value or n])");
        return -1;
    }
    const char *k = text_arg(PyTuple_GET_ITEM(a, 0), &nk);
    return k ? put_op(p, kind, k, nk, want[kind] == 2 ? PyTuple_GET_ITEM(a, 1) : NULL, idx, nidx) : -1;
}

static int plan_alloc(Plan *p, Py_ssize_t n) {
    p->off = calloc(n + 1, sizeof *p->off);
    return outcomes_alloc((PlanHead *)p, n, 0) || !p->off ? -1 : 0;
}

/* Plan(codes, args, index_key[, keys, values, scan_n]): codes 0 READ, 1 INSERT,
 * 2 DELETE, 3 UPDATE, 4 SCAN; args a tuple per operation, or None and the columns:
 * keys (prefix, digits, pad, scrambled numbers), values (one per operation) */
static PyObject *plan_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *codes, *argl, *as = NULL;
    const char *idx;
    Py_ssize_t nidx;
    cols_t c = {.scan_n = NULL};
    if (!PyArg_ParseTuple(args, "OOy#|(y#iiy*)OO", &codes, &argl, &idx, &nidx, &c.prefix, &c.np, &c.digits,
                          &c.pad, &c.nums, &c.values, &c.scan_n))
        return NULL;
    PyObject *cs = PySequence_Fast(codes, "codes must be a sequence");
    int tuples = argl != Py_None;
    as = !cs ? NULL : PySequence_Fast(tuples ? argl : c.values ? c.values : Py_None, "args or values: a sequence");
    Plan *p = as ? (Plan *)type->tp_alloc(type, 0) : NULL;
    if (!p) goto fail;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(cs);
    if (PySequence_Fast_GET_SIZE(as) != n || (!tuples && (!c.scan_n || c.digits < 1 || c.digits > 16
                                                          || c.pad < 0 || c.nums.len != n * 8))) {
        PyErr_SetString(PyExc_ValueError, "codes, args or the columns differ in length");
        goto fail;
    }
    if (plan_alloc(p, n)) goto nomem;
    c.values = as;
    for (Py_ssize_t i = 0; i < n; i++) {
        long k = PyLong_AsLong(PySequence_Fast_GET_ITEM(cs, i));
        if (k < 0 || k >= NKINDS) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "operation code %ld: no such operation", k);
            goto fail;
        }
        p->codes[i] = (int8_t)k;
        p->off[i] = p->len;
        if (tuples ? put_tuple(p, (int)k, PySequence_Fast_GET_ITEM(as, i), idx, nidx)
                   : put_col(p, i, (int)k, &c, idx, nidx)) {
            if (!PyErr_Occurred()) goto nomem;
            goto fail;
        }
    }
    p->off[n] = p->len;
    Py_DECREF(cs), Py_DECREF(as);
    if (c.nums.buf) PyBuffer_Release(&c.nums);
    return (PyObject *)p;
nomem:
    PyErr_NoMemory();
fail:
    Py_XDECREF(cs), Py_XDECREF(as), Py_XDECREF(p);
    if (c.nums.buf) PyBuffer_Release(&c.nums);
    return NULL;
}

static PyTypeObject PlanType =
    PLAN_TYPE(Plan, "a chunk of operations as Redis commands", plan_new, plan_dealloc);

/* ------------------------------------------------------------------ Conn */

typedef struct {
    PyObject_HEAD
    redisContext *ctx;
    /* the operation in flight (cur >= 0): its replies wanted and got, its status so
     * far, whether a scan's MGET is sent; and run_many's plan, next operation, done */
    Plan *plan;
    Py_ssize_t pos, done, cur;
    int kind, want, got, mget, st;
    int64_t t0;
} Conn;

static inline int conn_bad(const Conn *c) { return !c->ctx || c->ctx->err; }

#include "_muxconn.h"

static int mux_ready(const Conn *c) { return !conn_bad(c); }

static void conn_free_ctx(Conn *c) {
    if (c->ctx) redisFree(c->ctx);
    c->ctx = NULL;
}

static void conn_dealloc(Conn *c) {
    conn_free_ctx(c);
    Py_XDECREF(c->plan);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* a command at connection time (AUTH, SELECT): 0 when it was answered without error */
static int setup_cmd(Conn *c, const char *what, int argc, const char **argv) {
    redisReply *r = redisCommandArgv(c->ctx, argc, argv, NULL);
    if (r && r->type != REDIS_REPLY_ERROR) {
        freeReplyObject(r);
        return 0;
    }
    PyErr_Format(PyExc_ConnectionError, "%s: %s", what, r ? r->str : c->ctx->errstr);
    if (r) freeReplyObject(r);
    return -1;
}

/* Conn(host, port, unix_path, username, password, db, connect_timeout_s): host None
 * with a path; username None: AUTH with the password alone */
static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    const char *host, *path, *user, *pw, *db;
    int port;
    double tmo;
    if (!PyArg_ParseTuple(args, "zizzzsd", &host, &port, &path, &user, &pw, &db, &tmo)) return NULL;
    Conn *c = (Conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    c->cur = -1;
    struct timeval tv = {(time_t)tmo, (suseconds_t)((tmo - (time_t)tmo) * 1e6)}, none = {0, 0};
    Py_BEGIN_ALLOW_THREADS
    c->ctx = path ? redisConnectUnixWithTimeout(path, tv) : redisConnectWithTimeout(host, port, tv);
    Py_END_ALLOW_THREADS
    if (!c->ctx || c->ctx->err) {
        PyErr_Format(PyExc_ConnectionError, "cannot connect: %s", c->ctx ? c->ctx->errstr : "out of memory");
        goto fail;
    }
    redisSetTimeout(c->ctx, none);   /* the connect's timeout only: an operation waits */
    if (pw && *pw && (user && *user ? setup_cmd(c, "AUTH", 3, (const char *[]){"AUTH", user, pw})
                                    : setup_cmd(c, "AUTH", 2, (const char *[]){"AUTH", pw})))
        goto fail;
    if (strcmp(db, "0") != 0 && setup_cmd(c, "SELECT", 2, (const char *[]){"SELECT", db})) goto fail;
    return (PyObject *)c;
fail:
    Py_DECREF(c);
    return NULL;
}

static int flush(Conn *c) {
    int done = 0;
    while (!done)
        if (redisBufferWrite(c->ctx, &done) != REDIS_OK) return -1;
    return 0;
}

/* send operation i of the plan; 0 when that failed (the connection is lost) */
static int send_op(Conn *c, Py_ssize_t i) {
    Plan *p = c->plan;
    c->cur = i;
    c->kind = p->codes[i];
    c->want = c->kind == K_INSERT || c->kind == K_DELETE ? 4 : 1;
    c->got = c->mget = 0;
    c->st = ST_OK;
    c->t0 = now_ns();
    return c->ctx && redisAppendFormattedCommand(c->ctx, p->buf + p->off[i], p->off[i + 1] - p->off[i])
        == REDIS_OK && flush(c) == 0;
}

/* a scan's keys: their MGET sent; 0 when that failed */
static int send_mget(Conn *c, redisReply *r) {
    size_t n = r->elements + 1;
    const char **argv = malloc(n * sizeof *argv);
    size_t *lens = malloc(n * sizeof *lens);
    int ok = argv && lens;
    if (ok) {
        argv[0] = "MGET", lens[0] = 4;
        for (size_t j = 1; j < n; j++) argv[j] = r->element[j - 1]->str, lens[j] = r->element[j - 1]->len;
        ok = redisAppendCommandArgv(c->ctx, (int)n, argv, lens) == REDIS_OK && flush(c) == 0;
    }
    free(argv), free(lens);
    c->mget = 1;
    c->want++;
    return ok;
}

/* the status the last reply (an EXEC's array, a GET's …) gives its operation */
static int judge(const Conn *c, const redisReply *r) {
    if (r->type == REDIS_REPLY_ERROR) return ST_ERROR;
    switch (c->kind) {
    case K_READ:
    case K_UPDATE: return r->type == REDIS_REPLY_NIL ? ST_EMPTY : ST_OK;
    case K_SCAN: return ST_OK;
    default:   /* EXEC: [SET's or DEL's reply, ZADD's or ZREM's] */
        if (r->type != REDIS_REPLY_ARRAY || r->elements < 1) return ST_ERROR;
        r = r->element[0];
        if (c->kind == K_INSERT) return r->type == REDIS_REPLY_STATUS ? ST_OK : ST_ERROR;
        return r->type != REDIS_REPLY_INTEGER ? ST_ERROR : r->integer ? ST_OK : ST_EMPTY;
    }
}

/* a reply to the operation in flight (freed here); 1 when the operation is complete */
static int on_reply(Conn *c, redisReply *r) {
    int last = ++c->got == c->want;
    if (r->type == REDIS_REPLY_ERROR) c->st = ST_ERROR;   /* MULTI's, a QUEUED's: EXEC fails too */
    else if (last && c->st == ST_OK) c->st = judge(c, r);
    if (last && c->kind == K_SCAN && !c->mget && r->type == REDIS_REPLY_ARRAY && r->elements > 0
        && c->st == ST_OK) {
        last = !send_mget(c, r);
        if (last) c->st = ST_ERROR;
    }
    freeReplyObject(r);
    return last;
}

/* operation i on this connection, blocking: its status */
static int exec_one(Conn *c, Py_ssize_t i) {
    if (!send_op(c, i)) return ST_ERROR;
    for (;;) {
        void *r;
        if (redisGetReply(c->ctx, &r) != REDIS_OK || !r) return ST_ERROR;
        if (on_reply(c, r)) return c->st;
    }
}

/* operation i of the connection's plan, blocking (_loop.h's op_fn): its status */
static int redis_op(void *conn, PlanHead *p, Py_ssize_t i) {
    Conn *c = conn;
    int st = exec_one(c, i);
    c->cur = -1;
    return st;
}

static int conn_lost(void *c) { return conn_bad((Conn *)c); }

/* conn.run(plan, i, next_tick, end, start, offset, period, issued) -> (i, t1, flags):
 * the paced loop (_loop.h) of plan's operations on this connection (as the SQL loops'
 * Conn.run) */
static PyObject *conn_run(Conn *c, PyObject *args) {
    PlanHead *p;
    Py_ssize_t i;
    run_args a;
    if (parse_run(args, &PlanType, &p, &i, &a)) return NULL;
    if (c->cur >= 0) {
        PyErr_SetString(PyExc_IndexError, "busy");
        return NULL;
    }
    Plan *own = c->plan;
    int flags;
    int64_t t1;
    c->plan = (Plan *)p;
    Py_BEGIN_ALLOW_THREADS
    i = run_paced(c, redis_op, conn_lost, p, i, a, &t1, &flags);
    Py_END_ALLOW_THREADS
    c->plan = own;
    return Py_BuildValue("nLi", i, (long long)t1, flags);
}

static PyObject *conn_get_closed(Conn *c, void *u) { return PyBool_FromLong(conn_bad(c)); }

static PyObject *conn_close(Conn *c, PyObject *u) {
    conn_free_ctx(c);
    Py_RETURN_NONE;
}

static PyMethodDef conn_methods[] = {
    MUX_CONN_METHODS,
    {NULL}};

static PyGetSetDef conn_getset[] = {
    MUX_CONN_GETSET,
    {NULL}};

static PyTypeObject ConnType =
    CONN_TYPE(Conn, "a hiredis connection that runs plans of Redis commands", conn_new, conn_dealloc, conn_methods, conn_getset);

/* ------------------------------------------------------------------ run_many */

/* the connection's next operation sent; 0 when that failed (recorded as an ERROR) */
static int start_next(Conn *c) {
    if (send_op(c, c->pos++)) return 1;
    finish_op(c, ST_ERROR, now_ns());
    return 0;
}

/* what arrived on a readable connection; 1 when its operation is complete */
static int collect(Conn *c) {
    if (redisBufferRead(c->ctx) != REDIS_OK) {
        finish_op(c, ST_ERROR, now_ns());
        return 1;
    }
    for (;;) {
        void *r = NULL;
        if (redisGetReplyFromReader(c->ctx, &r) != REDIS_OK) {
            finish_op(c, ST_ERROR, now_ns());
            return 1;
        }
        if (!r) return 0;
        if (on_reply(c, r)) {
            finish_op(c, c->st, now_ns());
            return 1;
        }
    }
}

static int poll_many(Conn **cs, Py_ssize_t n, struct pollfd *pf, Py_ssize_t *map, int64_t next_tick,
                     int64_t end, int sending, int64_t *t1, Py_ssize_t *k) {
    int started = start_idle(cs, n, sending, t1, k);
    if (started >= 0) return started;
    for (;;) {
        Py_ssize_t m = 0;
        for (Py_ssize_t j = 0; j < n; j++)
            if (cs[j]->cur >= 0) {
                pf[m] = (struct pollfd){.fd = cs[j]->ctx->fd, .events = POLLIN};
                map[m++] = j;
            }
        if (m == 0) return F_IDLE;
        int r = poll(pf, (nfds_t)m, 1000);
        if (r == 0) return F_WAIT;
        for (Py_ssize_t q = 0; r > 0 && q < m; q++) {
            if (!pf[q].revents || !collect(cs[map[q]])) continue;
            *t1 = cs[map[q]]->plan->lat[cs[map[q]]->done - 1] + cs[map[q]]->t0;
            *k = map[q];
            int flags = after_op(cs[map[q]], *t1, next_tick, end, sending);
            if (flags) return flags;
        }
    }
}

PyMODINIT_FUNC PyInit__redisloop(void) { return loop_module(&loop_def, &PlanType, &ConnType, redis_kinds); }
