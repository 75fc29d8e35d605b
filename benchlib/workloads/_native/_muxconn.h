/* What the C loops that drive all of a process's connections from one thread share
 * (_pgloop.c over libpq, _myloop.c over libmariadb, _redisloop.c over hiredis): each
 * connection's plan and place in it (conn.assign, .done, .plan), what to do after one of
 * its operations completed (after_op), and run_many, the call that polls them
 * (benchlib.run.native.NativeMuxThread drives it).
 *
 * The including file includes _loop.h and defines, before it includes this one: its Plan
 * (starting with PLAN_OUTCOMES) and PlanType; its Conn, with the fields `Plan *plan;
 * Py_ssize_t pos, done, cur; int64_t t0;` (cur: the operation in flight, -1 none; t0:
 * when it was sent); conn_bad(c).
 * It defines after: ConnType, start_next(c) (send the next operation of its plan, 0
 * when that failed, recorded as an ERROR), mux_ready(c) (may run_many drive it) and
 * poll_many, the loop itself. Its module is loop_def (run_many, its one function).
 */
#ifndef MUXCONN_H
#define MUXCONN_H

#include <poll.h>

static PyTypeObject ConnType;
static int start_next(Conn *c);
static int mux_ready(const Conn *c);
static int poll_many(Conn **cs, Py_ssize_t n, struct pollfd *pf, Py_ssize_t *map, int64_t next_tick,
                     int64_t end, int sending, int64_t *t1, Py_ssize_t *k);

static inline int has_ops(const Conn *c) { return c->plan && c->pos < c->plan->n; }

/* conn.assign(plan, pos=0): the plan run_many goes on with on this connection, from
 * operation pos (a reconnected connection takes over its predecessor's); None: none */
static PyObject *conn_assign(Conn *c, PyObject *args) {
    PyObject *plan;
    Py_ssize_t pos = 0;
    if (!PyArg_ParseTuple(args, "O|n", &plan, &pos)) return NULL;
    if (plan != Py_None && !PyObject_TypeCheck(plan, &PlanType)) {
        PyErr_SetString(PyExc_TypeError, "a Plan or None");
        return NULL;
    }
    if (c->cur >= 0) {
        PyErr_SetString(PyExc_RuntimeError, "an operation is in flight");
        return NULL;
    }
    if (plan != Py_None && (pos < 0 || pos > ((Plan *)plan)->n)) {
        PyErr_SetString(PyExc_IndexError, "position out of range");
        return NULL;
    }
    Py_XDECREF(c->plan);
    c->plan = plan == Py_None ? NULL : (Plan *)plan;
    Py_XINCREF(c->plan);
    c->pos = c->done = pos;
    Py_RETURN_NONE;
}

static PyObject *conn_get_done(Conn *c, void *unused) { return PyLong_FromSsize_t(c->done); }

static PyObject *conn_get_plan(Conn *c, void *unused) {
    PyObject *p = c->plan ? (PyObject *)c->plan : Py_None;
    Py_INCREF(p);
    return p;
}

/* every Conn's methods and attributes: the loop's conn_run, conn_close and
 * conn_get_closed, and run_many's (conn.assign, .done, .plan) */
#define MUX_CONN_METHODS \
    {"run", (PyCFunction)conn_run, METH_VARARGS, "run a plan's operations from i"}, \
    {"close", (PyCFunction)conn_close, METH_NOARGS, "close the connection"}, \
    {"assign", (PyCFunction)conn_assign, METH_VARARGS, "the plan run_many runs on it, from pos"}
#define MUX_CONN_GETSET \
    {"closed", (getter)conn_get_closed, NULL, "True when the connection is gone", NULL}, \
    {"done", (getter)conn_get_done, NULL, "operations of its plan completed (run_many)", NULL}, \
    {"plan", (getter)conn_get_plan, NULL, "the plan run_many runs on it (assign)", NULL}

/* connection c's operation in flight completed at t1 with status st (unpaced: no
 * intended latency) */
static void finish_op(Conn *c, int st, int64_t t1) {
    Plan *p = c->plan;
    p->lat[c->cur] = t1 - c->t0;
    p->itd[c->cur] = -1;
    p->st[c->cur] = (int8_t)st;
    c->done = c->cur + 1;
    c->cur = -1;
}

/* poll_many's start: each idle connection with operations left sends its next one; -1
 * when all did, else why to return (k: the connection whose send failed) */
static int start_idle(Conn **cs, Py_ssize_t n, int sending, int64_t *t1, Py_ssize_t *k) {
    for (Py_ssize_t j = 0; j < n; j++)
        if (sending && cs[j]->cur < 0 && has_ops(cs[j]) && !start_next(cs[j])) {
            *k = j;
            *t1 = now_ns();
            return conn_bad(cs[j]) ? F_BROKEN : 0;
        }
    return -1;
}

/* after connection c's operation completed at t1: why to return, and its next one sent */
static int after_op(Conn *c, int64_t t1, int64_t next_tick, int64_t end, int sending) {
    int flags = 0;
    if (c->plan->st[c->done - 1] == ST_ERROR && conn_bad(c)) return F_BROKEN;
    if (t1 >= next_tick) flags |= F_TICK;
    if (!sending || (end && t1 >= end)) return flags;  /* its loop is over: it stays idle */
    if (!has_ops(c)) return flags | F_NEED;
    if (!start_next(c)) flags |= conn_bad(c) ? F_BROKEN : 0;
    return flags;
}

#define RUN_MANY_DOC \
    "run_many(conns, next_tick, end, sending) -> (flags, t1, k): the connections' closed loops " \
    "from one thread (unpaced), until the first completion at or after next_tick (F_TICK), a " \
    "connection lost (F_BROKEN), one whose plan is used up (F_NEED), none busy (F_IDLE) or a " \
    "second without a completion (F_WAIT); k is the connection concerned"

static PyObject *run_many(PyObject *self, PyObject *args) {
    PyObject *list;
    long long next_tick, end;
    int sending;
    if (!PyArg_ParseTuple(args, "O!LLi", &PyList_Type, &list, &next_tick, &end, &sending)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    Conn **cs = calloc(n + 1, sizeof *cs);
    struct pollfd *pf = calloc(n + 1, sizeof *pf);
    Py_ssize_t *map = calloc(n + 1, sizeof *map);
    int flags = -1;
    int64_t t1 = 0;
    Py_ssize_t k = -1;
    if (!cs || !pf || !map) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *o = PyList_GET_ITEM(list, j);
        if (!PyObject_TypeCheck(o, &ConnType) || !mux_ready((Conn *)o)) {
            PyErr_SetString(PyExc_TypeError, "open, prepared Conns expected");
            goto out;
        }
        cs[j] = (Conn *)o;
    }
    Py_BEGIN_ALLOW_THREADS
    flags = poll_many(cs, n, pf, map, next_tick, end, sending, &t1, &k);
    Py_END_ALLOW_THREADS
out:
    free(cs), free(pf), free(map);
    return flags < 0 ? NULL : Py_BuildValue("iLn", flags, (long long)t1, k);
}

/* the loop's module: its function run_many (and, added by loop_module, its types and constants) */
static PyMethodDef loop_functions[] = {{"run_many", (PyCFunction)run_many, METH_VARARGS, RUN_MANY_DOC}, {NULL}};
static struct PyModuleDef loop_def = {PyModuleDef_HEAD_INIT, LOOP_NAME, NULL, -1, loop_functions};

#endif
