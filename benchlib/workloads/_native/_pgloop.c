/* Operations on PostgreSQL, a chunk at a time, in C over libpq: YCSB's (read, update,
 * insert, scan, read-modify-write) and ybio's (COUNT: a range read or updated, its
 * rows counted), one loop for both, owned by neither (benchlib/workloads/_native/).
 *
 * The Python hot loop (benchlib/run/clients.py) pays the interpreter for every
 * operation: the call into the binding, psycopg's wrapping of libpq, the clock
 * readings, the list appends. On a host shared with the server that CPU is taken
 * from the server. Here the driver hands over a whole chunk of prepared operations
 * (a Plan: the workload's codes and argument tuples, parsed once) and the loop
 * issues, waits for and times each of them without the GIL, until the chunk ends,
 * the second in progress ends (the driver hands each second's latencies to its
 * process), the paced schedule passes the step's end, or the connection is lost.
 *
 * What it records per operation is what the Python path records (_sqlplan.h, the
 * Plan it shares with _myloop.c; _loop.h, the paced loop every loop shares), statuses
 * judged as the workloads' PostgreSQL bindings judge them.
 *
 * Conn.run drives one connection with libpq's synchronous PQexecPrepared (a thread
 * per connection); run_many drives several from one thread with
 * PQsendQueryPrepared and poll(), each connection a closed loop, as pgbench -j does.
 * The connection is the extension's own (psycopg's binary wheel bundles another
 * libpq, whose PGconn this one must not touch). Its statements: conn.prepare_ycsb
 * (read, scan, update by field, insert) and conn.prepare_counts (COUNT's, by index).
 */
#define LOOP_NAME "_pgloop"
#include "_sqlplan.h"

#include <libpq-fe.h>
#include <poll.h>

/* ------------------------------------------------------------------ Conn */

typedef struct {
    PyObject_HEAD
    PGconn *pg;
    int nf;
    char (*names)[16];  /* statement names: read 0..nf, scan, update (index field + 1), insert */
    int ncount;         /* K_COUNT statements prepared (prepare_counts): "n0", "n1" … */
    /* run_many's state, kept between calls: the plan, the next operation to send, the
     * operations completed, the one in flight (-1: none) and its statement */
    Plan *plan;
    Py_ssize_t pos, done, cur;
    int phase, kind, nres, res_st, first_st;
    int sent;  /* a statement sent since run_many last read the socket: look before poll */
    int64_t t0, tm, want;
} Conn;

static void conn_close_pg(Conn *c) {
    if (c->pg) {
        PGconn *pg = c->pg;
        c->pg = NULL;
        Py_BEGIN_ALLOW_THREADS
        PQfinish(pg);
        Py_END_ALLOW_THREADS
    }
}

static void conn_dealloc(Conn *c) {
    conn_close_pg(c);
    Py_XDECREF(c->plan);
    free(c->names);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *conn_error(PGconn *pg, const char *what) {
    error_line(PyExc_ConnectionError, what, pg ? PQerrorMessage(pg) : "out of memory");
    return NULL;
}

static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    const char *info;
    if (!PyArg_ParseTuple(args, "s", &info)) return NULL;
    Conn *c = (Conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    PGconn *pg;
    Py_BEGIN_ALLOW_THREADS
    pg = PQconnectdb(info);
    Py_END_ALLOW_THREADS
    c->pg = pg;
    c->cur = -1;
    if (!pg || PQstatus(pg) != CONNECTION_OK) {
        conn_error(pg, "cannot connect");
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

static int prepare_one(Conn *c, const char *name, PyObject *sql) {
    if (!PyBytes_Check(sql)) {
        PyErr_SetString(PyExc_TypeError, "statements must be bytes");
        return -1;
    }
    PGresult *r;
    Py_BEGIN_ALLOW_THREADS
    r = PQprepare(c->pg, name, PyBytes_AS_STRING(sql), 0, NULL);
    Py_END_ALLOW_THREADS
    int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) {
        char what[32];
        snprintf(what, sizeof what, "prepare %s", name);
        error_line(PyExc_ValueError, what, r ? PQresultErrorMessage(r) : PQerrorMessage(c->pg));
    }
    PQclear(r);
    return ok ? 0 : -1;
}

/* conn.prepare_ycsb(reads, scans, updates, insert): the statements by field + 1
 * (index 0: all fields), prepared once on this connection */
static PyObject *conn_prepare_ycsb(Conn *c, PyObject *args) {
    PyObject *lists[3], *insert;
    if (!PyArg_ParseTuple(args, "O!O!O!O", &PyList_Type, &lists[0], &PyList_Type, &lists[1],
                          &PyList_Type, &lists[2], &insert))
        return NULL;
    if (!c->pg) return conn_error(NULL, "closed");
    Py_ssize_t n = PyList_GET_SIZE(lists[0]);
    if (n < 2 || PyList_GET_SIZE(lists[1]) != n || PyList_GET_SIZE(lists[2]) != n) {
        PyErr_SetString(PyExc_ValueError, "reads, scans and updates: one per field + 1 each");
        return NULL;
    }
    free(c->names);
    c->names = calloc(3 * n + 1, sizeof *c->names);
    if (!c->names) return PyErr_NoMemory();
    c->nf = (int)n - 1;
    static const char kind[3] = {'r', 's', 'u'};
    for (int k = 0; k < 3; k++)
        for (Py_ssize_t j = 0; j < n; j++) {
            char *name = c->names[k * n + j];
            snprintf(name, 16, "%c%d", kind[k], (int)j);
            if (prepare_one(c, name, PyList_GET_ITEM(lists[k], j))) return NULL;
        }
    snprintf(c->names[3 * n], 16, "i");
    if (prepare_one(c, c->names[3 * n], insert)) return NULL;
    Py_RETURN_NONE;
}

/* conn.prepare_counts(statements): K_COUNT's statements, by index (bytes each) */
static PyObject *conn_prepare_counts(Conn *c, PyObject *args) {
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &list)) return NULL;
    if (!c->pg) return conn_error(NULL, "closed");
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n < 1 || n > 16) {
        PyErr_SetString(PyExc_ValueError, "1 to 16 statements");
        return NULL;
    }
    c->ncount = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", (int)j);
        if (prepare_one(c, name, PyList_GET_ITEM(list, j))) return NULL;
    }
    c->ncount = (int)n;
    Py_RETURN_NONE;
}

/* a statement's name; NULL where it is not prepared (the operation is an ERROR) */
static inline const char *stmt(const Conn *c, int kind, int idx) {
    static const char counts[16][4] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7",
                                       "n8", "n9", "n10", "n11", "n12", "n13", "n14", "n15"};
    if (kind == K_COUNT) return idx >= 0 && idx < c->ncount ? counts[idx] : NULL;
    if (!c->names) return NULL;
    int n = c->nf + 1;
    switch (kind) {
    case K_READ: return c->names[idx];
    case K_SCAN: return c->names[n + idx];
    case K_UPDATE: return c->names[2 * n + idx];
    default: return c->names[3 * n];
    }
}

/* the status of a statement's result, as YCSB's bindings/postgres.py judges it (K_COUNT
 * as ybio's bindings/postgres.py: its count must be `want`) */
static int judge(PGresult *r, int kind, int64_t want) {
    if (!r) return ST_ERROR;
    ExecStatusType s = PQresultStatus(r);
    switch (kind) {
    case K_READ:
        return s != PGRES_TUPLES_OK ? ST_ERROR : PQntuples(r) ? ST_OK : ST_NOT_FOUND;
    case K_SCAN:
        return s == PGRES_TUPLES_OK ? ST_OK : ST_ERROR;
    case K_COUNT:
        if (s != PGRES_TUPLES_OK || PQntuples(r) < 1 || PQnfields(r) < 1) return ST_ERROR;
        return strtoll(PQgetvalue(r, 0, 0), NULL, 10) == want ? ST_OK : ST_NOT_FOUND;
    case K_UPDATE: {
        if (s != PGRES_COMMAND_OK) return ST_ERROR;
        const char *t = PQcmdTuples(r);
        return (t[0] && strcmp(t, "0") != 0) ? ST_OK : ST_NOT_FOUND;
    }
    default:
        return s == PGRES_COMMAND_OK ? ST_OK : ST_ERROR;
    }
}

static int exec_sync(Conn *c, int kind, int idx, int np, const char *const *vals, int64_t want) {
    const char *name = stmt(c, kind, idx);
    if (!c->pg || !name) return ST_ERROR;
    PGresult *r = PQexecPrepared(c->pg, name, np, vals, NULL, NULL, 0);
    int st = judge(r, kind, want);
    PQclear(r);
    return st;
}

static inline int conn_bad(const Conn *c) { return !c->pg || PQstatus(c->pg) != CONNECTION_OK; }

#include "_muxconn.h"   /* assign, after_op, run_many: shared with _myloop.c, _redisloop.c */

static int mux_ready(const Conn *c) { return (c->names || c->ncount) && c->pg; }

static int exec_stmt(void *c, int kind, int idx, int np, const char *const *vals, int64_t want) {
    return exec_sync((Conn *)c, kind, idx, np, vals, want);
}

static int conn_lost(void *c) { return conn_bad((Conn *)c); }

/* conn.run(plan, i, next_tick, end, start, offset, period, issued) -> (i, t1, flags):
 * the paced loop (_loop.h) of this connection's statements (_sqlplan.h) */
static PyObject *conn_run(Conn *c, PyObject *args) { return sql_run(c, c->names || c->ncount, args); }

static PyObject *conn_close(Conn *c, PyObject *unused) {
    conn_close_pg(c);
    Py_RETURN_NONE;
}

static PyObject *conn_get_closed(Conn *c, void *unused) { return PyBool_FromLong(conn_bad(c)); }

static PyObject *conn_get_backend_pid(Conn *c, void *unused) {
    return PyLong_FromLong(c->pg ? PQbackendPID(c->pg) : 0);
}

static PyMethodDef conn_methods[] = {
    {"prepare_ycsb", (PyCFunction)conn_prepare_ycsb, METH_VARARGS, "prepare the statements"},
    {"prepare_counts", (PyCFunction)conn_prepare_counts, METH_VARARGS, "prepare K_COUNT's statements"},
    MUX_CONN_METHODS,
    {NULL}};

static PyGetSetDef conn_getset[] = {
    {"backend_pid", (getter)conn_get_backend_pid, NULL, "the server process", NULL},
    MUX_CONN_GETSET,
    {NULL}};

static PyTypeObject ConnType =
    CONN_TYPE(Conn, "a libpq connection with its statements prepared", conn_new, conn_dealloc, conn_methods, conn_getset);

/* ------------------------------------------------------------------ run_many */

static int send_stmt(Conn *c, int kind, int idx, int np, const char *const *vals) {
    const char *name = stmt(c, kind, idx);
    c->kind = kind;
    c->nres = 0;
    c->res_st = ST_ERROR;
    c->sent = 1;
    return c->pg && name && PQsendQueryPrepared(c->pg, name, np, vals, NULL, NULL, 0);
}

/* send the connection's next operation; 0 when its send failed (recorded as an ERROR) */
static int start_next(Conn *c) {
    Plan *p = c->plan;
    const op_t *op = plan_begin(p, c->cur = c->pos++);
    c->phase = 0;
    c->want = op->want;
    c->t0 = now_ns();
    if (send_stmt(c, op->kind == K_RMW ? K_READ : op->kind, op->f1, op->np1, p->params + op->p))
        return 1;
    finish_op(c, ST_ERROR, now_ns());
    return 0;
}

/* read what arrived; 1 when the statement's results are all in (its status in res_st) */
static int collect(Conn *c) {
    if (!PQconsumeInput(c->pg)) return 1;  /* the connection failed: res_st stays ERROR */
    while (!PQisBusy(c->pg)) {
        PGresult *r = PQgetResult(c->pg);
        if (!r) return 1;
        if (c->nres++ == 0) c->res_st = judge(r, c->kind, c->want);
        PQclear(r);
    }
    return 0;
}

/* a statement done: 1 when its operation is complete, 0 when a read-modify-write's
 * update has been sent after its read */
static int statement_done(Conn *c, int64_t now) {
    Plan *p = c->plan;
    Py_ssize_t i = c->cur;
    const op_t *op = &p->ops[i];
    int st = c->res_st;
    if (op->kind == K_RMW && c->phase == 0) {
        if (st == ST_ERROR && conn_bad(c)) {
            finish_op(c, st, now);
            return 1;
        }
        p->in1[i] = now - c->t0;
        c->first_st = st;
        c->phase = 1;
        c->tm = now;
        if (send_stmt(c, K_UPDATE, op->f2, op->np2, p->params + op->p + 1)) return 0;
        finish_op(c, ST_ERROR, now_ns());
        return 1;
    }
    if (op->kind == K_RMW) {
        p->in2[i] = now - c->tm;
        st = c->first_st ? c->first_st : st;
    }
    finish_op(c, st, now);
    return 1;
}

/* connection j's statement's results read from its socket where they have come: after
 * its operation completed, why to return (0: its next one sent; -1: still in flight) */
static int advance(Conn **cs, Py_ssize_t j, int64_t next_tick, int64_t end, int sending, int64_t *t1,
                   Py_ssize_t *k) {
    Conn *c = cs[j];
    c->sent = 0;
    if (!collect(c) || !statement_done(c, now_ns())) return -1;
    *t1 = now_ns();
    *k = j;
    return after_op(c, *t1, next_tick, end, sending);
}

/* Each connection with a statement just sent reads its socket first (one recv, as
 * pgbench does after each send: on loopback the answer is often there already, and a
 * connection that has it goes on without a poll); poll then waits only for those whose
 * answer has not come, and wakes once for all that have it by then. */
static int poll_many(Conn **cs, Py_ssize_t n, struct pollfd *pf, Py_ssize_t *map, int64_t next_tick,
                     int64_t end, int sending, int64_t *t1, Py_ssize_t *k) {
    int started = start_idle(cs, n, sending, t1, k), flags;
    if (started >= 0) return started;
    for (;;) {
        Py_ssize_t m = 0;
        for (Py_ssize_t j = 0; j < n; j++) {
            while (cs[j]->cur >= 0 && cs[j]->sent)
                if ((flags = advance(cs, j, next_tick, end, sending, t1, k)) > 0) return flags;
            if (cs[j]->cur >= 0) {
                pf[m].fd = PQsocket(cs[j]->pg);
                pf[m].events = POLLIN;
                pf[m].revents = 0;
                map[m++] = j;
            }
        }
        if (m == 0) return F_IDLE;
        int r = poll(pf, (nfds_t)m, 1000);
        if (r == 0) return F_WAIT;
        for (Py_ssize_t q = 0; r > 0 && q < m; q++)
            if (pf[q].revents && (flags = advance(cs, map[q], next_tick, end, sending, t1, k)) > 0)
                return flags;
    }
}

PyMODINIT_FUNC PyInit__pgloop(void) { return loop_module(&loop_def, &PlanType, &ConnType, sql_kinds); }
