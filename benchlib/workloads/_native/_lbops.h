/* LinkBench's requests, whatever the DBMS: lb_op (_loop.h's op_fn) runs request i of a
 * plan as requests.py's RequestClient runs it: reads and node writes on the autocommit
 * connection, link writes' transactions on the second, as LinkStoreSql opens them;
 * conn.run drives the paced loop over a plan. The loop that includes this (_lbloop.c,
 * libpq; _lbmyloop.c, libmariadb) defines its Conn (with `ready`, `limit`, `multi`) and
 * these calls on it, res_t being a statement's outcome (a pointer):
 *   db_ex(c, w, s, q)        statement s (STMT order) on the reads' (w 0) or the link
 *                            writes' (w 1) connection
 *   db_begin_with(c, s, q)   a link write's transaction opened with statement s (libpq:
 *                            BEGIN pipelined with it; libmariadb: autocommit off)
 *   db_multiget(c, op, ids)  MULTIGET_LINK's statement for op's IN list
 *   db_ok(r), db_dup(r)      it ran; it failed on a duplicate key
 *   db_matched(r)            an UPDATE or DELETE matched rows
 *   db_nrows(r), db_value(r, row, col)   a SELECT's rows, a value as text
 *   db_clear(r), db_commit(c) (1: done), db_rollback(c), db_lost(c) (either connection),
 *   db_close(c) (both)
 * and its module with LB_MODULE (its Conn's own attributes in a getset).
 */
#ifndef LBOPS_H
#define LBOPS_H

#include <sys/time.h>

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* link write statements: (link) id1, id2, link_type; (count) …, id1, link_type */
static void p_link(params_t *q, const lop_t *op) { p_num(q, op->a), p_num(q, op->b), p_num(q, op->t); }

/* addLinkImpl: 1 inserted, 0 the link was there (rolled back), -1 an error */
static int insert_link(Conn *c, const lop_t *op) {
    int64_t now = wall_ms();
    params_t q;
    p_init(&q), p_num(&q, op->a), p_num(&q, op->b), p_num(&q, op->t), p_num(&q, 1);
    p_bytes(&q, op->data), p_num(&q, 0), p_num(&q, now);
    res_t r = db_begin_with(c, S_INSERT_LINK, &q);
    if (!db_ok(r)) {
        int dup = db_dup(r);
        db_clear(r);
        db_rollback(c);
        return dup ? 0 : -1;
    }
    db_clear(r);
    p_init(&q), p_num(&q, op->a), p_num(&q, op->t), p_num(&q, 1), p_num(&q, now), p_num(&q, 1), p_num(&q, now);
    r = db_ex(c, 1, S_COUNT_ADD, &q);
    int done = db_ok(r);
    db_clear(r);
    done = done && db_commit(c);
    if (!done) db_rollback(c);
    return done ? 1 : -1;
}

/* the link locked (SELECT … FOR UPDATE) in a new transaction: its visibility, -1 none
 * (rolled back), -2 an error (rolled back) */
static int lock_link(Conn *c, const lop_t *op) {
    params_t q;
    p_init(&q), p_link(&q, op);
    res_t r = db_begin_with(c, S_GET_VIS, &q);
    int vis = !db_ok(r) ? -2 : db_nrows(r) ? atoi(db_value(r, 0, 0)) : -1;
    db_clear(r);
    if (vis < 0) db_rollback(c);
    return vis;
}

/* the count of (id1, link_type) changed by d */
static int count_change(Conn *c, const lop_t *op, int d, int64_t now) {
    params_t q;
    p_init(&q), p_num(&q, d), p_num(&q, now), p_num(&q, op->a), p_num(&q, op->t);
    res_t r = db_ex(c, 1, S_COUNT_CHANGE, &q);
    int done = db_ok(r);
    db_clear(r);
    return done;
}

/* updateLinkImpl: 1 updated, 0 no link (rolled back), -1 an error */
static int update_link(Conn *c, const lop_t *op) {
    int vis = lock_link(c, op);
    if (vis < 0) return vis == -1 ? 0 : -1;
    int64_t now = wall_ms();
    params_t q;
    p_init(&q), p_num(&q, 1), p_bytes(&q, op->data), p_num(&q, 0), p_num(&q, now), p_link(&q, op);
    res_t r = db_ex(c, 1, S_UPDATE_LINK, &q);
    int done = db_ok(r), same = done && !db_matched(r);
    db_clear(r);
    if (same) {   /* nothing matched: nothing to commit */
        db_rollback(c);
        return 1;
    }
    done = done && (vis == 1 || count_change(c, op, 1, now)) && db_commit(c);
    if (!done) db_rollback(c);
    return done ? 1 : -1;
}

/* newLinkLoop: insert (ADD_LINK) or update (UPDATE_LINK) first, the other when needed */
static int write_link(Conn *c, const lop_t *op, int insert_first) {
    int insert = insert_first;
    for (int k = 0; k < MAX_SWITCHES; k++) {
        last_err[0] = 0;   /* a duplicate key switched: no error of this request's */
        int r = insert ? insert_link(c, op) : update_link(c, op);
        if (r < 0) return ST_ERROR;
        if (r > 0) return insert == insert_first ? ST_OK : ST_RETRY;
        insert = !insert;
    }
    return ST_ERROR;
}

static int delete_link(Conn *c, const lop_t *op) {
    int vis = lock_link(c, op);
    if (vis == -2) return ST_ERROR;
    if (vis != 1) {
        if (vis >= 0) db_rollback(c);
        return ST_EMPTY;
    }
    params_t q;
    p_init(&q), p_link(&q, op);
    res_t r = db_ex(c, 1, S_HIDE_LINK, &q);
    int done = db_ok(r);
    db_clear(r);
    done = done && count_change(c, op, -1, wall_ms()) && db_commit(c);
    if (!done) db_rollback(c);
    return done ? ST_OK : ST_ERROR;
}

/* a read's outcome: its status (OK with rows, else EMPTY), the rows into plan->rows[i] */
static int read_rows(Plan *p, Py_ssize_t i, res_t r, const char *limit) {
    const lop_t *op = &p->ops[i];
    if (!db_ok(r)) {
        db_clear(r);
        return ST_ERROR;
    }
    int n = db_nrows(r), st = n ? ST_OK : ST_EMPTY;
    p->rows[i] = n;
    if (op->code == GET_LINKS_LIST && n >= atoll(limit))
        p->last[i] = atoll(db_value(r, n - 1, LINK_TIME));
    else if (op->code == GET_NODE && (!n || strcmp(db_value(r, 0, 1), NODE_TYPE) != 0))
        st = ST_EMPTY;
    db_clear(r);
    return st;
}

/* a node write: OK where it matched rows (ADD_NODE: where it ran), else EMPTY */
static int node_write(Conn *c, int s, const params_t *q) {
    res_t r = db_ex(c, 0, s, q);
    int st = !db_ok(r) ? ST_ERROR : s == S_ADD_NODE || db_matched(r) ? ST_OK : ST_EMPTY;
    db_clear(r);
    return st;
}

/* request i of the plan (_loop.h's op_fn) */
static int lb_op(void *conn, PlanHead *ph, Py_ssize_t i) {
    Conn *c = conn;
    Plan *p = (Plan *)ph;
    const lop_t *op = &p->ops[i];
    params_t q;
    int st;
    p_init(&q);
    p->rows[i] = p->last[i] = 0;
    last_err[0] = 0;
    switch (op->code) {
    case ADD_LINK: st = write_link(c, op, 1); break;
    case UPDATE_LINK: st = write_link(c, op, 0); break;
    case DELETE_LINK: st = delete_link(c, op); break;
    case COUNT_LINK:
        p_num(&q, op->a), p_num(&q, op->t);
        st = read_rows(p, i, db_ex(c, 0, S_COUNT_LINKS, &q), c->limit);
        break;
    case MULTIGET_LINK:
        if (c->multi[op->nm]) st = read_rows(p, i, db_multiget(c, op, p->ids + op->m), c->limit);
        else st = ST_ERROR, snprintf(last_err, sizeof last_err, "MULTIGET_LINK of %d id2s not prepared", op->nm);
        break;
    case GET_LINKS_LIST:
        p_num(&q, op->a), p_num(&q, op->t), p_num(&q, 0), p_num(&q, op->b), p_str(&q, c->limit), p_num(&q, op->off);
        st = read_rows(p, i, db_ex(c, 0, S_LIST, &q), c->limit);
        break;
    case ADD_NODE:
        p_str(&q, NODE_TYPE), p_num(&q, 1), p_num(&q, wall_ms() / 1000), p_bytes(&q, op->data);
        st = node_write(c, S_ADD_NODE, &q);
        break;
    case UPDATE_NODE:
        p_num(&q, 2), p_num(&q, wall_ms() / 1000), p_bytes(&q, op->data), p_num(&q, op->a), p_str(&q, NODE_TYPE);
        st = node_write(c, S_UPDATE_NODE, &q);
        break;
    case DELETE_NODE:
        p_num(&q, op->a), p_str(&q, NODE_TYPE);
        st = node_write(c, S_DELETE_NODE, &q);
        break;
    default:   /* GET_NODE */
        p_num(&q, op->a);
        st = read_rows(p, i, db_ex(c, 0, S_GET_NODE, &q), c->limit);
    }
    p->tend[i] = now_ns();
    if (st == ST_ERROR && last_err[0]) keep_error(p, i, last_err);
    return st;
}

static int conn_lost(void *conn) { return db_lost(conn); }

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
    db_close(c);
    Py_RETURN_NONE;
}

static PyMethodDef conn_methods[] = {
    {"prepare", (PyCFunction)conn_prepare, METH_VARARGS, "the 12 statements, in STMT order"},
    {"prepare_multiget", (PyCFunction)conn_prepare_multiget, METH_VARARGS, "MULTIGET_LINK's for n id2s"},
    {"run", (PyCFunction)conn_run, METH_VARARGS, "run a plan's requests i .. stop-1"},
    {"close", (PyCFunction)conn_close, METH_NOARGS, "close the connections"},
    {NULL}};

/* the module `init` makes: Plan, Conn (doc; getset: its attributes), _loop.h's constants */
#define LB_MODULE(init, doc, getset)                                                                \
    static PyTypeObject ConnType = CONN_TYPE(Conn, doc, conn_new, conn_dealloc, conn_methods, getset); \
    static PyMethodDef no_functions[] = {{NULL}};                                                   \
    static struct PyModuleDef lb_def = {PyModuleDef_HEAD_INIT, LOOP_NAME, NULL, -1, no_functions};   \
    PyMODINIT_FUNC init(void) { return loop_module(&lb_def, &PlanType, &ConnType, op_names); }

#endif
