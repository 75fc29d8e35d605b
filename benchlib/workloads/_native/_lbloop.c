/* LinkBench's ten request operations on PostgreSQL, a chunk at a time, in C over libpq
 * (benchlib/workloads/linkbench/bindings/postgres_native.py hands the chunks over).
 *
 * The Python path (requests.py over psycopg) pays ~100 µs of client CPU per request,
 * most of it in psycopg's layers (prepare handling, argument conversion, its
 * generators, fetch). Here a chunk of requests (the codes and argument tuples that
 * RequestClient.next_chunk draws) is parsed once into a Plan and run by _loop.h's paced
 * loop without the GIL, each request as LinkStorePgsql sends it and requests.py does:
 *   reads and node writes: one prepared statement each, autocommit;
 *   link writes: BEGIN pipelined with the transaction's first statement (one round trip,
 *   as pgjdbc and PgDb send them), then its statements and COMMIT, ROLLBACK where the
 *   Python path rolls back; ADD_LINK inserting first, UPDATE_LINK locking first, each
 *   becoming the other when the first finds it needed (RETRY, at most 4 switches);
 *   a duplicate key (SQLSTATE 23505) is the one error that switches, any other ERROR.
 * Statuses as requests.py returns them (OK, RETRY, EMPTY, ERROR), with per request the
 * rows a MULTIGET_LINK or GET_LINKS_LIST returned, a full list's last link time (the
 * list-tail history, kept in Python) and the request's end time (RequesterStats).
 *
 * Statements: conn.prepare(list of 12, range_limit) in the order of STMT below (on
 * both connections), conn.prepare_multiget(n, sql) for each IN-list length.
 */
#define LOOP_NAME "_lbloop"
#include "_loop.h"

#include <libpq-fe.h>

/* _loop.h's part this loop does without: parse_run (conn.run here takes where to stop too) */
static __attribute__((unused)) void *const unused_parts[] = {(void *)parse_run};

enum { ADD_LINK, DELETE_LINK, UPDATE_LINK, COUNT_LINK, MULTIGET_LINK, GET_LINKS_LIST, ADD_NODE,
       UPDATE_NODE, DELETE_NODE, GET_NODE, NOPS };
static const char *const op_names[NOPS + 1] = {"ADD_LINK", "DELETE_LINK", "UPDATE_LINK", "COUNT_LINK",
    "MULTIGET_LINK", "GET_LINKS_LIST", "ADD_NODE", "UPDATE_NODE", "DELETE_NODE", "GET_NODE", NULL};
/* the prepared statements, by index (names "l0" …) */
enum { S_GET_VIS, S_INSERT_LINK, S_UPDATE_LINK, S_HIDE_LINK, S_COUNT_ADD, S_COUNT_CHANGE,
       S_COUNT_LINKS, S_LIST, S_GET_NODE, S_UPDATE_NODE, S_ADD_NODE, S_DELETE_NODE, NSTMT };
enum { ST_RETRY = 3 };           /* benchlib.schema's RETRY */
#define MAX_MULTI 10000          /* the longest MULTIGET_LINK IN list: properties.py's bound
                                    on link_multiget_dist_max (10,002 parameters < 65,535) */
#define MAX_SWITCHES 4
#define NODE_TYPE "2048"         /* LinkStore.DEFAULT_NODE_TYPE */
#define LINK_TIME 6              /* a link row's time column */

/* ------------------------------------------------------------------ Plan */

typedef struct {
    int8_t code;
    int64_t a, t, b, off;  /* id1 (node id), link type, id2 (a list's upper time), offset */
    PyObject *data;        /* a write's payload (bytes, kept by the plan's argument list) */
    int32_t m, nm;         /* MULTIGET_LINK: its id2s, ids[m .. m + nm) */
} lop_t;

typedef struct {
    PyObject_HEAD
    PLAN_OUTCOMES
    lop_t *ops;
    int64_t *ids, *rows, *last, *tend;  /* multiget id2s; rows returned, a full list's last time, end ns */
    char **errs;                        /* an ERROR's server message, by request (made at the first) */
    Py_ssize_t cap;                     /* the plan's requests (n is where a run stops) */
    PyObject *keep;
} Plan;

static void plan_dealloc(Plan *p) {
    for (Py_ssize_t i = 0; p->errs && i < p->cap; i++) free(p->errs[i]);
    free(p->errs), free(p->ops), free(p->ids), free(p->rows), free(p->last), free(p->tend);
    outcomes_free((PlanHead *)p);
    Py_XDECREF(p->keep);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static int get_ll(PyObject *t, Py_ssize_t j, int64_t *v) {
    *v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, j));
    return *v == -1 && PyErr_Occurred() ? -1 : 0;
}

/* one request's tuple, in RequestClient.next_chunk's shapes */
static int parse_op(Plan *p, Py_ssize_t i, int code, PyObject *a, Py_ssize_t *nid) {
    static const Py_ssize_t want[NOPS] = {4, 3, 4, 2, 3, 3, 1, 2, 1, 1};
    lop_t *op = &p->ops[i];
    if (!PyTuple_Check(a) || PyTuple_GET_SIZE(a) != want[code]) {
        PyErr_Format(PyExc_ValueError, "request %zd: a tuple of %zd arguments expected", i, want[code]);
        return -1;
    }
    op->code = (int8_t)code;
    op->b = INT64_MAX;
    PyObject *data = NULL;
    switch (code) {
    case ADD_LINK: case UPDATE_LINK: data = PyTuple_GET_ITEM(a, 3); /* fall through */
    case DELETE_LINK:
        if (get_ll(a, 0, &op->a) || get_ll(a, 1, &op->t) || get_ll(a, 2, &op->b)) return -1;
        break;
    case COUNT_LINK: case GET_LINKS_LIST:
        if (get_ll(a, 0, &op->a) || get_ll(a, 1, &op->t)) return -1;
        break;
    case MULTIGET_LINK: {
        if (get_ll(a, 0, &op->a) || get_ll(a, 1, &op->t)) return -1;
        PyObject *seq = PySequence_Fast(PyTuple_GET_ITEM(a, 2), "id2s must be a sequence");
        if (!seq) return -1;
        Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
        if (k > MAX_MULTI || k < 1) {   /* before the realloc: p->ids stays the one allocated */
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "request %zd: 1 to %d id2s", i, MAX_MULTI);
            return -1;
        }
        int64_t *ids = realloc(p->ids, (*nid + k) * sizeof *ids);
        if (!ids) {
            Py_DECREF(seq);
            PyErr_NoMemory();
            return -1;
        }
        p->ids = ids;
        op->m = (int32_t)*nid, op->nm = (int32_t)k;
        for (Py_ssize_t j = 0; j < k; j++)
            if ((ids[*nid + j] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, j))) == -1 && PyErr_Occurred()) {
                Py_DECREF(seq);
                return -1;
            }
        *nid += k;
        Py_DECREF(seq);
        break;
    }
    case ADD_NODE: data = PyTuple_GET_ITEM(a, 0); break;
    case UPDATE_NODE: data = PyTuple_GET_ITEM(a, 1); /* fall through */
    default:
        if (get_ll(a, 0, &op->a)) return -1;
    }
    if (data && !PyBytes_Check(data)) {
        PyErr_Format(PyExc_TypeError, "request %zd: a payload must be bytes", i);
        return -1;
    }
    op->data = data;
    return 0;
}

/* Plan(codes, args): a chunk of requests (codes: REQUEST_OPS' order) */
static PyObject *plan_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *codes, *argl;
    if (!PyArg_ParseTuple(args, "OO", &codes, &argl)) return NULL;
    PyObject *cs = PySequence_Fast(codes, "codes must be a sequence");
    PyObject *as = cs ? PySequence_Fast(argl, "args must be a sequence") : NULL;
    Plan *p = as ? (Plan *)type->tp_alloc(type, 0) : NULL;
    if (!p) goto fail;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(cs), nid = 0;
    if (PySequence_Fast_GET_SIZE(as) != n) {
        PyErr_SetString(PyExc_ValueError, "codes and args differ in length");
        goto fail;
    }
    p->ops = calloc(n + 1, sizeof *p->ops);
    p->rows = calloc(n + 1, 8), p->last = calloc(n + 1, 8), p->tend = calloc(n + 1, 8);
    if (outcomes_alloc((PlanHead *)p, n, 0) || !p->ops || !p->rows || !p->last || !p->tend) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(cs, i));
        if (c < 0 || c >= NOPS) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "request code %ld out of range", c);
            goto fail;
        }
        p->codes[i] = (int8_t)c;
        if (parse_op(p, i, (int)c, PySequence_Fast_GET_ITEM(as, i), &nid)) goto fail;
    }
    p->keep = as, p->cap = n;
    Py_DECREF(cs);
    return (PyObject *)p;
fail:
    Py_XDECREF(cs);
    Py_XDECREF(as);
    Py_XDECREF(p);
    return NULL;
}

/* plan.set_list(i, id1, link_type, max_time, offset): GET_LINKS_LIST i pages back into a
 * list's tail (the history Python keeps) */
static PyObject *plan_set_list(Plan *p, PyObject *args) {
    Py_ssize_t i;
    long long a, t, b, off;
    if (!PyArg_ParseTuple(args, "nLLLL", &i, &a, &t, &b, &off)) return NULL;
    if (i < 0 || i >= p->n || p->ops[i].code != GET_LINKS_LIST) {
        PyErr_SetString(PyExc_IndexError, "no GET_LINKS_LIST there");
        return NULL;
    }
    lop_t *op = &p->ops[i];
    op->a = a, op->t = t, op->b = b, op->off = off;
    Py_RETURN_NONE;
}

/* plan.extra(a, b): rows returned, a full list's last link time, end time (ns), packed int64 */
static PyObject *plan_extra(Plan *p, PyObject *args) {
    Py_ssize_t a, b;
    if (range_args(args, p->n, &a, &b)) return NULL;
    Py_ssize_t k = (b - a) * 8;
    return Py_BuildValue("y#y#y#", (char *)(p->rows + a), k, (char *)(p->last + a), k, (char *)(p->tend + a), k);
}

/* request i's server message, kept without the GIL (lb_op); none kept if out of memory */
static void keep_error(Plan *p, Py_ssize_t i, const char *m) {
    if (!p->errs && !(p->errs = calloc((size_t)p->cap + 1, sizeof *p->errs))) return;
    free(p->errs[i]);
    p->errs[i] = strdup(m);
}

/* plan.errors(a, b): [(i, message)] of requests a..b-1 that kept one */
static PyObject *plan_errors(Plan *p, PyObject *args) {
    Py_ssize_t a, b;
    if (range_args(args, p->cap, &a, &b)) return NULL;
    PyObject *out = PyList_New(0);
    for (Py_ssize_t i = a; out && p->errs && i < b; i++) {
        const char *m = p->errs[i];
        PyObject *x = m ? Py_BuildValue("(nN)", i, PyUnicode_DecodeUTF8(m, (Py_ssize_t)strlen(m), "replace")) : NULL;
        if (p->errs[i] && (!x || PyList_Append(out, x) < 0)) Py_CLEAR(out);
        Py_XDECREF(x);
    }
    return out;
}

static PyMethodDef lb_plan_methods[] = {
    PLAN_RESULTS_METHOD,
    {"extra", (PyCFunction)plan_extra, METH_VARARGS, "rows, last list time, end ns of a..b-1"},
    {"set_list", (PyCFunction)plan_set_list, METH_VARARGS, "a history GET_LINKS_LIST's arguments"},
    {"errors", (PyCFunction)plan_errors, METH_VARARGS, "[(i, server message)] of a..b-1's errors"},
    {NULL}};

static PyTypeObject PlanType =
    PLAN_TYPE_WITH(Plan, "a chunk of LinkBench requests", plan_new, plan_dealloc, lb_plan_methods);

/* ------------------------------------------------------------------ Conn */

typedef struct {
    PyObject_HEAD
    PGconn *pg, *w;                  /* reads and node writes (autocommit); link writes */
    int ready;
    char limit[24];                  /* range_limit, as text */
    uint8_t multi[MAX_MULTI + 1];    /* the IN-list lengths prepared */
} Conn;

static void conn_close_pg(Conn *c) {
    PGconn *pg = c->pg, *w = c->w;
    c->pg = c->w = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (pg) PQfinish(pg);
    if (w) PQfinish(w);
    Py_END_ALLOW_THREADS
}

static void conn_dealloc(Conn *c) {
    conn_close_pg(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    const char *info;
    if (!PyArg_ParseTuple(args, "s", &info)) return NULL;
    Conn *c = (Conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    PGconn *pg, *w;
    Py_BEGIN_ALLOW_THREADS
    pg = PQconnectdb(info);
    w = pg && PQstatus(pg) == CONNECTION_OK ? PQconnectdb(info) : NULL;
    Py_END_ALLOW_THREADS
    c->pg = pg, c->w = w;
    PGconn *bad = !pg || PQstatus(pg) != CONNECTION_OK ? pg : w;
    if (!bad || PQstatus(bad) != CONNECTION_OK) {
        error_line(PyExc_ConnectionError, "cannot connect", bad ? PQerrorMessage(bad) : "out of memory");
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

static int prepare_one(PGconn *pg, const char *name, PyObject *sql) {
    if (!PyBytes_Check(sql)) {
        PyErr_SetString(PyExc_TypeError, "statements must be bytes");
        return -1;
    }
    if (!pg) {
        PyErr_SetString(PyExc_ConnectionError, "closed");
        return -1;
    }
    PGresult *r;
    Py_BEGIN_ALLOW_THREADS
    r = PQprepare(pg, name, PyBytes_AS_STRING(sql), 0, NULL);
    Py_END_ALLOW_THREADS
    int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) error_line(PyExc_ValueError, name, r ? PQresultErrorMessage(r) : PQerrorMessage(pg));
    PQclear(r);
    return ok ? 0 : -1;
}

/* conn.prepare(statements, range_limit): the 12 statements of the STMT order */
static PyObject *conn_prepare(Conn *c, PyObject *args) {
    PyObject *list;
    long long limit;
    if (!PyArg_ParseTuple(args, "O!L", &PyList_Type, &list, &limit)) return NULL;
    if (PyList_GET_SIZE(list) != NSTMT) {
        PyErr_Format(PyExc_ValueError, "%d statements expected", NSTMT);
        return NULL;
    }
    for (int j = 0; j < NSTMT; j++) {
        char name[8];
        snprintf(name, sizeof name, "l%d", j);
        if (prepare_one(c->pg, name, PyList_GET_ITEM(list, j)) || prepare_one(c->w, name, PyList_GET_ITEM(list, j)))
            return NULL;
    }
    snprintf(c->limit, sizeof c->limit, "%lld", limit);
    c->ready = 1;
    Py_RETURN_NONE;
}

/* conn.prepare_multiget(n, sql): MULTIGET_LINK's statement for n id2s, once */
static PyObject *conn_prepare_multiget(Conn *c, PyObject *args) {
    int n;
    PyObject *sql;
    if (!PyArg_ParseTuple(args, "iO", &n, &sql)) return NULL;
    if (n < 1 || n > MAX_MULTI) return PyErr_Format(PyExc_ValueError, "1 to %d id2s", MAX_MULTI);
    if (!c->multi[n]) {
        char name[16];
        snprintf(name, sizeof name, "m%d", n);
        if (prepare_one(c->pg, name, sql)) return NULL;
        c->multi[n] = 1;
    }
    Py_RETURN_NONE;
}

#include "_lbops.h"   /* the requests themselves: lb_op */

static int conn_lost(void *conn) {   /* either connection */
    const Conn *c = conn;
    return !c->pg || !c->w || PQstatus(c->pg) != CONNECTION_OK || PQstatus(c->w) != CONNECTION_OK;
}

/* conn.run(plan, i, stop, next_tick, end, start, offset, period, issued) -> (i, t1, flags):
 * _loop.h's paced loop over requests i .. stop-1 (stop: where Python must first look) */
static PyObject *conn_run(Conn *c, PyObject *args) {
    Plan *p;
    Py_ssize_t i, stop;
    run_args a;
    if (!PyArg_ParseTuple(args, "O!nnLLLLdL", &PlanType, &p, &i, &stop, &a.next_tick, &a.end, &a.start,
                          &a.offset, &a.period, &a.issued))
        return NULL;
    if (i < 0 || stop > p->n || i > stop) {
        PyErr_SetString(PyExc_IndexError, "request index out of range");
        return NULL;
    }
    if (!c->ready) {
        PyErr_SetString(PyExc_RuntimeError, "statements not prepared");
        return NULL;
    }
    int flags;
    int64_t t1;
    Py_ssize_t n = p->n;
    p->n = stop;   /* run_paced goes to the plan's end: here, to stop (the GIL is held by no one else on p) */
    Py_BEGIN_ALLOW_THREADS
    i = run_paced(c, lb_op, conn_lost, (PlanHead *)p, i, a, &t1, &flags);
    Py_END_ALLOW_THREADS
    p->n = n;
    return Py_BuildValue("nLi", i, (long long)t1, flags);
}

static PyObject *conn_close(Conn *c, PyObject *unused) {
    conn_close_pg(c);
    Py_RETURN_NONE;
}

static PyObject *conn_get_closed(Conn *c, void *unused) { return PyBool_FromLong(conn_lost(c)); }

static PyObject *conn_get_backend_pid(Conn *c, void *unused) {
    return PyLong_FromLong(c->pg ? PQbackendPID(c->pg) : 0);
}

static PyMethodDef conn_methods[] = {
    {"prepare", (PyCFunction)conn_prepare, METH_VARARGS, "prepare the 12 statements"},
    {"prepare_multiget", (PyCFunction)conn_prepare_multiget, METH_VARARGS, "MULTIGET_LINK's for n id2s"},
    {"run", (PyCFunction)conn_run, METH_VARARGS, "run a plan's requests i .. stop-1"},
    {"close", (PyCFunction)conn_close, METH_NOARGS, "close the connection"},
    {NULL}};

static PyGetSetDef conn_getset[] = {
    {"backend_pid", (getter)conn_get_backend_pid, NULL, "the server process", NULL},
    {"closed", (getter)conn_get_closed, NULL, "True when the connection is gone", NULL},
    {NULL}};

static PyTypeObject ConnType =
    CONN_TYPE(Conn, "a libpq connection with LinkBench's statements prepared", conn_new, conn_dealloc,
              conn_methods, conn_getset);

static PyMethodDef no_functions[] = {{NULL}};
static struct PyModuleDef lb_def = {PyModuleDef_HEAD_INIT, LOOP_NAME, NULL, -1, no_functions};

PyMODINIT_FUNC PyInit__lbloop(void) { return loop_module(&lb_def, &PlanType, &ConnType, op_names); }
