/* Operations on MariaDB/MySQL, a chunk at a time, in C over libmariadb (YCSB's; COUNT,
 * ybio's, is libpq's loop's alone).
 *
 * The twin of _pgloop.c (libpq) for MariaDB: the driver hands over a Plan (a chunk
 * of operations parsed once, _sqlplan.h) and the paced loop (_loop.h) issues, awaits
 * and times each of them without the GIL. What a statement is on the wire is what the Python path
 * (YCSB's bindings/mysql.py, mysqlclient or PyMySQL) sends: the statement's text with each
 * key and value escaped by the connection (mysql_real_escape_string, which follows
 * the connection's character set and NO_BACKSLASH_ESCAPES) and quoted, a scan's
 * length as a number; results fetched whole (mysql_store_result). Statuses are judged
 * as bindings/mysql.py judges them: a read that finds no row is NOT_FOUND; an update
 * is OK whatever it changed (MariaDB counts rows changed, not matched); a failed
 * statement is an ERROR, and the connection is lost when the server says so or no
 * longer answers a ping (asked only after an error, as mysqlclient's `open` is there).
 *
 * Conn.run drives one connection with the blocking API (a thread per connection, paced
 * or not); run_many drives several from one thread with libmariadb's non-blocking API
 * (mysql_real_query_start/_cont, mysql_store_result_start/_cont) and poll() on each
 * connection's socket, each connection a closed loop, as sysbench's and pgbench's
 * threads drive theirs (_muxconn.h, shared with _pgloop.c and _redisloop.c).
 *
 * The connection is the extension's own (mysqlclient links the same library, but its
 * MYSQL handle is not to be shared).
 */
#define LOOP_NAME "_myloop"
#include "_sqlplan.h"

#include <errmsg.h>
#include <mysql.h>

#include "_mylib.h"


typedef struct {
    PyObject_HEAD
    MYSQL *m;
    int nf, ntmpl;
    tmpl_t *t;       /* read 0..nf, scan 0..nf, update 0..nf (field + 1), insert */
    char *q;         /* the statement being sent */
    size_t cap;
    int gone;        /* -1: not known since the last error; 0/1 */
    /* run_many's state, kept between calls (_muxconn.h): the plan, the next operation to
     * send, the operations completed, the one in flight (-1: none); the statement in
     * flight: the call it is in (A_*), what that call waits for (MYSQL_WAIT_*) and until
     * when (a timeout), its outcome */
    Plan *plan;
    Py_ssize_t pos, done, cur;
    int phase, kind, res_st, first_st, call, wait, qret, over;
    MYSQL_RES *res;
    int64_t t0, tm, deadline, t_over;
} Conn;

static void free_tmpls(Conn *c) {
    for (int k = 0; c->t && k < c->ntmpl; k++) tmpl_free(&c->t[k]);
    free(c->t);
    c->t = NULL;
    c->ntmpl = 0;
}

static void conn_close_my(Conn *c) {
    if (c->res) mysql_free_result(c->res);
    c->res = NULL;
    if (c->m) {
        MYSQL *m = c->m;
        c->m = NULL;
        Py_BEGIN_ALLOW_THREADS
        mysql_close(m);
        Py_END_ALLOW_THREADS
    }
}

static void conn_dealloc(Conn *c) {
    conn_close_my(c);
    Py_XDECREF(c->plan);
    free_tmpls(c);
    free(c->q);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* Conn(host, user, password, database, port, unix_socket=None, connect_timeout=10) */
static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    my_args a;
    if (!my_parse(args, &a)) return NULL;
    Conn *c = (Conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    MYSQL *m = mysql_init(NULL);
    if (!m) {
        Py_DECREF(c);
        return PyErr_NoMemory();
    }
    c->cur = -1;   /* run_many's calls need the non-blocking option; the blocking ones still work */
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = my_connect(m, &a, 0, 1, 1);
    Py_END_ALLOW_THREADS
    if (!ok) {
        my_connect_error(m);
        mysql_close(m);
        Py_DECREF(c);
        return NULL;
    }
    c->m = m;
    c->gone = 0;
    return (PyObject *)c;
}

/* conn.prepare_ycsb(reads, scans, updates, insert): the statements' texts with %s
 * placeholders, by field + 1 (index 0: all fields) */
static PyObject *conn_prepare_ycsb(Conn *c, PyObject *args) {
    PyObject *lists[3], *insert;
    if (!PyArg_ParseTuple(args, "O!O!O!O", &PyList_Type, &lists[0], &PyList_Type, &lists[1],
                          &PyList_Type, &lists[2], &insert))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lists[0]);
    if (n < 2 || PyList_GET_SIZE(lists[1]) != n || PyList_GET_SIZE(lists[2]) != n) {
        PyErr_SetString(PyExc_ValueError, "reads, scans and updates: one per field + 1 each");
        return NULL;
    }
    free_tmpls(c);
    c->t = calloc(3 * n + 1, sizeof *c->t);
    if (!c->t) return PyErr_NoMemory();
    c->ntmpl = (int)(3 * n + 1);
    for (int k = 0; k < 3; k++)
        for (Py_ssize_t j = 0; j < n; j++)
            if (split_tmpl(&c->t[k * n + j], PyList_GET_ITEM(lists[k], j))) goto fail;
    if (split_tmpl(&c->t[3 * n], insert)) goto fail;
    c->nf = (int)n - 1;
    Py_RETURN_NONE;
fail:
    free_tmpls(c);
    return NULL;
}

static inline tmpl_t *stmt(Conn *c, int kind, int idx) {
    int n = c->nf + 1;
    switch (kind) {
    case K_READ: return &c->t[idx];
    case K_SCAN: return &c->t[n + idx];
    case K_UPDATE: return &c->t[2 * n + idx];
    default: return &c->t[3 * n];
    }
}

static int reserve(Conn *c, size_t need) {
    if (need <= c->cap) return 0;
    size_t cap = c->cap ? c->cap : 4096;
    while (cap < need) cap *= 2;
    char *q = realloc(c->q, cap);
    if (!q) return -1;
    c->q = q;
    c->cap = cap;
    return 0;
}

/* the statement's text with its parameters in place; its length, or -1 (K_COUNT's
 * statements are libpq's loop's alone: an ERROR here) */
static long build(Conn *c, const tmpl_t *t, int kind, int np, const char *const *vals) {
    if (kind == K_COUNT || np != t->n) return -1;
    size_t need = 1;
    for (int j = 0; j <= t->n; j++) need += t->len[j] + (j < np ? 2 * strlen(vals[j]) + 2 : 0);
    if (reserve(c, need)) return -1;
    char *q = c->q;
    for (int j = 0; j <= t->n; j++) {
        memcpy(q, t->text + t->off[j], t->len[j]);
        q += t->len[j];
        if (j == np) break;
        size_t vl = strlen(vals[j]);
        if (kind == K_SCAN && j == 1) {  /* the scan's length: a number, made by the Plan */
            memcpy(q, vals[j], vl);
            q += vl;
            continue;
        }
        *q++ = '\'';
        unsigned long w = mysql_real_escape_string(c->m, q, vals[j], (unsigned long)vl);
        if (w == (unsigned long)-1) return -1;  /* not in the connection's character set */
        q += w;
        *q++ = '\'';
    }
    *q = 0;
    return (long)(q - c->q);
}

static int exec_sync(Conn *c, int kind, int idx, int np, const char *const *vals) {
    if (!c->m) return ST_ERROR;
    long len = build(c, stmt(c, kind, idx), kind, np, vals);
    if (len < 0 || mysql_real_query(c->m, c->q, (unsigned long)len)) {
        c->gone = -1;
        return ST_ERROR;
    }
    if (!mysql_field_count(c->m)) return ST_OK;  /* update, insert */
    MYSQL_RES *r = mysql_store_result(c->m);
    if (!r) {
        c->gone = -1;
        return ST_ERROR;
    }
    my_ulonglong rows = mysql_num_rows(r);
    mysql_free_result(r);
    return kind == K_READ && rows == 0 ? ST_NOT_FOUND : ST_OK;
}

/* lost: the server said so, or does not answer a ping (asked once after an error) */
static int conn_bad(Conn *c) {
    if (!c->m) return 1;
    if (c->gone < 0) c->gone = my_lost(c->m);
    return c->gone;
}

#include "_muxconn.h"   /* assign, after_op, run_many: shared with _pgloop.c, _redisloop.c */

static int mux_ready(const Conn *c) { return c->t && c->m; }

static int exec_stmt(void *c, int kind, int idx, int np, const char *const *vals, int64_t want) {
    return exec_sync((Conn *)c, kind, idx, np, vals);
}

static int conn_lost(void *c) { return conn_bad((Conn *)c); }

/* conn.run(plan, i, next_tick, end, start, offset, period, issued) -> (i, t1, flags):
 * the paced loop (_loop.h) of this connection's statements (_sqlplan.h) */
static PyObject *conn_run(Conn *c, PyObject *args) {
    PyObject *p = PyTuple_Check(args) && PyTuple_GET_SIZE(args) ? PyTuple_GET_ITEM(args, 0) : NULL;
    if (c->t && p && PyObject_TypeCheck(p, &PlanType) && ((Plan *)p)->nf != c->nf) {
        PyErr_SetString(PyExc_ValueError, "the plan was made for another number of fields");
        return NULL;
    }
    return sql_run(c, c->t != NULL, args);
}

static PyObject *conn_close(Conn *c, PyObject *unused) {
    conn_close_my(c);
    Py_RETURN_NONE;
}

static PyObject *conn_get_closed(Conn *c, void *unused) {
    return PyBool_FromLong(!c->m || (c->gone != 0 && conn_bad(c)));
}

static PyObject *conn_get_thread_id(Conn *c, void *unused) {
    return PyLong_FromUnsignedLong(c->m ? mysql_thread_id(c->m) : 0);
}


/* ------------------------------------------------------------------ run_many */

enum { A_NONE, A_QUERY, A_STORE };   /* the non-blocking call a statement is in */

/* the statement in flight after its call returned `status`: the next call when this one
 * is done (the result's rows after the query), until one waits (0: c->wait says on what)
 * or the statement is done (1: its status in res_st, judged as exec_sync judges it) */
static int stmt_step(Conn *c, int status) {
    for (;;) {
        if (status) {
            c->wait = status;
            if (status & MYSQL_WAIT_TIMEOUT)
                c->deadline = now_ns() + (int64_t)mysql_get_timeout_value_ms(c->m) * 1000000;
            return 0;
        }
        if (c->call == A_QUERY && !c->qret && mysql_field_count(c->m)) {  /* a read, a scan */
            c->call = A_STORE;
            status = mysql_store_result_start(&c->res, c->m);
            continue;
        }
        if (c->call == A_QUERY)
            c->res_st = c->qret ? ST_ERROR : ST_OK;   /* update, insert; or the query failed */
        else if (c->res) {
            my_ulonglong rows = mysql_num_rows(c->res);
            mysql_free_result(c->res);
            c->res = NULL;
            c->res_st = c->kind == K_READ && rows == 0 ? ST_NOT_FOUND : ST_OK;
        } else
            c->res_st = ST_ERROR;
        if (c->res_st == ST_ERROR) c->gone = -1;
        c->call = A_NONE;
        return 1;
    }
}

/* send a statement: 0 when it waits for the server, 1 when it is already done */
static int stmt_send(Conn *c, int kind, int idx, int np, const char *const *vals) {
    c->kind = kind;
    c->res_st = ST_ERROR;
    long len = c->m ? build(c, stmt(c, kind, idx), kind, np, vals) : -1;
    if (len < 0) {
        c->gone = -1;
        return 1;
    }
    c->call = A_QUERY;
    return stmt_step(c, mysql_real_query_start(&c->qret, c->m, c->q, (unsigned long)len));
}

/* the statement's call goes on with what poll found (MYSQL_WAIT_* bits) */
static int stmt_cont(Conn *c, int ready) {
    if (c->call == A_QUERY) return stmt_step(c, mysql_real_query_cont(&c->qret, c->m, ready));
    return stmt_step(c, mysql_store_result_cont(&c->res, c->m, ready));
}

/* a statement done at `now`: 1 when its operation is complete (recorded), 0 when a
 * read-modify-write's update has been sent after its read and waits */
static int statement_done(Conn *c, int64_t now) {
    Plan *p = c->plan;
    Py_ssize_t i = c->cur;
    const op_t *op = &p->ops[i];
    for (;;) {
        int st = c->res_st;
        if (op->kind != K_RMW) break;
        if (c->phase == 1) {
            p->in2[i] = now - c->tm;
            finish_op(c, c->first_st ? c->first_st : st, now);
            return 1;
        }
        if (st == ST_ERROR && conn_bad(c)) break;   /* no update on a lost connection */
        p->in1[i] = now - c->t0;
        c->first_st = st;
        c->phase = 1;
        c->tm = now;
        if (!stmt_send(c, K_UPDATE, op->f2, op->np2, p->params + op->p + 1)) return 0;
        now = now_ns();
    }
    finish_op(c, c->res_st, now);
    return 1;
}

/* send the connection's next operation; always 1 (in flight): one whose first statement
 * is over at once (its reply already there, or not sent: an ERROR) is taken up by
 * poll_many's next round as if poll had found it ready */
static int start_next(Conn *c) {
    Plan *p = c->plan;
    const op_t *op = plan_begin(p, c->cur = c->pos++);
    c->phase = 0;
    c->t0 = now_ns();
    c->over = stmt_send(c, op->kind == K_RMW ? K_READ : op->kind, op->f1, op->np1, p->params + op->p);
    if (c->over) c->t_over = now_ns();
    return 1;
}

/* what poll found on a socket, as the non-blocking calls take it */
static int ready_of(short revents, int wait) {
    int r = (revents & POLLIN ? MYSQL_WAIT_READ : 0) | (revents & POLLOUT ? MYSQL_WAIT_WRITE : 0)
            | (revents & POLLPRI ? MYSQL_WAIT_EXCEPT : 0);
    if (revents & (POLLERR | POLLHUP | POLLNVAL)) r |= wait & (MYSQL_WAIT_READ | MYSQL_WAIT_WRITE);
    return r;
}

/* the connections in flight into pf (events from what each waits for; none for one whose
 * statement is already over); their count, and in *wait_ms poll's timeout: a second, or
 * less to the first call's own timeout, 0 when a statement is over */
static Py_ssize_t fill_poll(Conn **cs, Py_ssize_t n, struct pollfd *pf, Py_ssize_t *map, int *wait_ms) {
    Py_ssize_t m = 0;
    int64_t now = 0;
    *wait_ms = 1000;
    for (Py_ssize_t j = 0; j < n; j++) {
        Conn *c = cs[j];
        if (c->cur < 0) continue;
        short ev = (c->wait & MYSQL_WAIT_READ ? POLLIN : 0) | (c->wait & MYSQL_WAIT_WRITE ? POLLOUT : 0)
                   | (c->wait & MYSQL_WAIT_EXCEPT ? POLLPRI : 0);
        pf[m] = (struct pollfd){.fd = c->over ? -1 : mysql_get_socket(c->m), .events = ev};
        map[m++] = j;
        if (c->over) *wait_ms = 0;
        if (c->wait & MYSQL_WAIT_TIMEOUT) {
            now = now ? now : now_ns();
            int64_t ms = (c->deadline - now) / 1000000;
            *wait_ms = ms < 0 ? 0 : ms < *wait_ms ? (int)ms : *wait_ms;
        }
    }
    return m;
}

static int poll_many(Conn **cs, Py_ssize_t n, struct pollfd *pf, Py_ssize_t *map, int64_t next_tick,
                     int64_t end, int sending, int64_t *t1, Py_ssize_t *k) {
    int started = start_idle(cs, n, sending, t1, k);
    if (started >= 0) return started;
    for (;;) {
        int wait_ms;
        Py_ssize_t m = fill_poll(cs, n, pf, map, &wait_ms);
        if (m == 0) return F_IDLE;
        int r = poll(pf, (nfds_t)m, wait_ms);
        int64_t now = now_ns();
        int handled = 0;   /* a statement taken up without poll (over at once, timed out) */
        for (Py_ssize_t q = 0; q < m; q++) {
            Conn *c = cs[map[q]];
            if (c->over) {   /* over as it was sent */
                c->over = 0;
                handled = 1;
                if (!statement_done(c, c->t_over)) continue;
            } else {
                int ready = ready_of(pf[q].revents, c->wait);
                if (!ready && c->wait & MYSQL_WAIT_TIMEOUT && now >= c->deadline) ready = MYSQL_WAIT_TIMEOUT;
                if (!ready) continue;
                handled |= ready == MYSQL_WAIT_TIMEOUT;
                if (!stmt_cont(c, ready) || !statement_done(c, now_ns())) continue;
            }
            *t1 = now_ns();
            *k = map[q];
            int flags = after_op(c, *t1, next_tick, end, sending);
            if (flags) return flags;
        }
        if (r == 0 && !handled) return F_WAIT;
    }
}

static PyMethodDef conn_methods[] = {
    {"prepare_ycsb", (PyCFunction)conn_prepare_ycsb, METH_VARARGS, "the statements' texts"},
    MUX_CONN_METHODS,
    {NULL}};

static PyGetSetDef conn_getset[] = {
    {"thread_id", (getter)conn_get_thread_id, NULL, "the server's connection id", NULL},
    MUX_CONN_GETSET,
    {NULL}};

static PyTypeObject ConnType =
    CONN_TYPE(Conn, "a libmariadb connection with YCSB's statements", conn_new, conn_dealloc, conn_methods, conn_getset);

PyMODINIT_FUNC PyInit__myloop(void) {
    /* once, under the GIL: mysql_init would do it on first use, not thread-safely */
    if (mysql_library_init(0, NULL, NULL)) {
        PyErr_SetString(PyExc_ImportError, "libmariadb could not be initialised");
        return NULL;
    }
    return loop_module(&loop_def, &PlanType, &ConnType, sql_kinds);
}
