/* LinkBench's requests as a plan, whatever the DBMS (_lbloop.c over libpq, _lbmyloop.c over
 * libmariadb include this after _loop.h): the request codes (REQUEST_OPS' order), a
 * chunk of RequestClient.next_chunk's tuples parsed once into a Plan, the statements'
 * order (conn.prepare's list), and what a request's outcome carries besides _loop.h's
 * (rows returned, a full list's last link time, end time). */
#ifndef LBPLAN_H
#define LBPLAN_H
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

/* the server's message of this thread's last failed statement, its first line (the DB
 * layer notes it where a statement fails: note_error): a request's ERROR keeps it
 * (keep_error, plan.errors), as the Python path's exception carries it */
static __thread char last_err[256];

static void note_error(const char *m) {
    size_t n = strcspn(m, "\n");
    n = n < sizeof last_err ? n : sizeof last_err - 1;
    memcpy(last_err, m, n);
    last_err[n] = 0;
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

/* a statement's parameters, up to 8: numbers as text, one payload (bytes) at `bin` (-1: none);
 * libpq binds them, libmariadb writes them into the statement's text */
typedef struct {
    int n, bin;
    char txt[8][24];
    const char *v[8];
    int len[8], fmt[8];
} params_t;

static void p_init(params_t *q) { q->n = 0, q->bin = -1; }

static void p_num(params_t *q, int64_t x) {
    snprintf(q->txt[q->n], 24, "%lld", (long long)x);
    q->v[q->n] = q->txt[q->n], q->len[q->n] = 0, q->fmt[q->n] = 0;
    q->n++;
}

static void p_str(params_t *q, const char *s) {
    q->v[q->n] = s, q->len[q->n] = 0, q->fmt[q->n] = 0;
    q->n++;
}

static void p_bytes(params_t *q, PyObject *b) {   /* bytes: its buffer is read without the GIL */
    q->v[q->n] = PyBytes_AS_STRING(b), q->len[q->n] = (int)PyBytes_GET_SIZE(b), q->fmt[q->n] = 1;
    q->bin = q->n++;
}

#endif
