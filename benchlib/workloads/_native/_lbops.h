/* LinkBench's requests on one libpq connection (_lbloop.c includes this after its Plan
 * and Conn): lb_op, _loop.h's op_fn, as requests.py's RequestClient runs them over
 * psycopg (PgDb: BEGIN pipelined with a link write's first statement): reads and node
 * writes on the autocommit connection (c->pg), link writes' transactions on the second
 * (c->w), as LinkStoreSql opens them. Numbers go as text parameters, payloads as binary
 * bytea. */
#ifndef LBOPS_H
#define LBOPS_H

#include <sys/time.h>

static const char *const stmt_names[NSTMT] = {"l0", "l1", "l2", "l3", "l4", "l5",
                                              "l6", "l7", "l8", "l9", "l10", "l11"};

/* up to 8 parameters: numbers as text, one payload (binary) at `bin` (-1: none) */
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

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static PGresult *ex(PGconn *pg, const char *name, const params_t *q) {
    if (!pg) return NULL;
    return PQexecPrepared(pg, name, q->n, q->v, q->len, q->fmt, 0);
}

/* the server's message of this thread's last failed statement (its primary message, as
 * psycopg's str(e) begins; the connection's where no result came): a request's ERROR
 * carries it (plan.errors), as the Python path's exception does */
static __thread char last_err[256];

static void note(PGconn *pg, const PGresult *r) {
    const char *m = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (!m || !*m) m = r ? PQresultErrorMessage(r) : NULL;
    if (!m || !*m) m = pg ? PQerrorMessage(pg) : "connection closed";
    size_t n = strcspn(m, "\n");
    n = n < sizeof last_err ? n : sizeof last_err - 1;
    memcpy(last_err, m, n);
    last_err[n] = 0;
}

static int ok(PGconn *pg, const PGresult *r) {   /* a command's or query's result; else noted */
    ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) return 1;
    note(pg, r);
    return 0;
}

static int rows_ok(PGconn *pg, const PGresult *r) {   /* a query's rows came; else noted */
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK) return 1;
    note(pg, r);
    return 0;
}

static int is_dup_key(const PGresult *r) {
    const char *s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    return s && strcmp(s, "23505") == 0;
}

static int changed(const PGresult *r) {   /* an UPDATE or DELETE matched rows */
    const char *t = PQcmdTuples((PGresult *)r);
    return t[0] && strcmp(t, "0") != 0;
}

static int simple(PGconn *pg, const char *sql) {   /* COMMIT, ROLLBACK: 1 when done */
    if (!pg) return 0;
    PGresult *r = PQexec(pg, sql);
    int done = ok(pg, r);
    PQclear(r);
    return done;
}

static void rollback(PGconn *pg) {
    if (pg && PQtransactionStatus(pg) != PQTRANS_IDLE) simple(pg, "ROLLBACK");
}

/* BEGIN and the transaction's first statement in one pipeline (one round trip): the
 * statement's result (NULL: none came) */
static PGresult *begin_with(PGconn *pg, const char *name, const params_t *q) {
    if (!pg || !PQenterPipelineMode(pg)) return NULL;
    PGresult *res = NULL, *r;
    if (PQsendQueryParams(pg, "BEGIN", 0, NULL, NULL, NULL, NULL, 0)
        && PQsendQueryPrepared(pg, name, q->n, q->v, q->len, q->fmt, 0) && PQpipelineSync(pg)) {
        int query = 0, nulls = 0;   /* results: BEGIN's, NULL, the statement's, NULL, the sync */
        for (;;) {
            if (!(r = PQgetResult(pg))) {
                if (++nulls > 2 || PQstatus(pg) != CONNECTION_OK) break;
                query++;
                continue;
            }
            nulls = 0;
            if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
                PQclear(r);
                break;
            }
            if (query == 1 && !res) res = r;
            else PQclear(r);
        }
    }
    PQexitPipelineMode(pg);
    return res;
}

/* link write statements: (link) id1, id2, link_type; (count) …, id1, link_type */
static void p_link(params_t *q, const lop_t *op) { p_num(q, op->a), p_num(q, op->b), p_num(q, op->t); }

/* addLinkImpl: 1 inserted, 0 the link was there (rolled back), -1 an error */
static int insert_link(Conn *c, const lop_t *op) {
    int64_t now = wall_ms();
    params_t q;
    p_init(&q), p_num(&q, op->a), p_num(&q, op->b), p_num(&q, op->t), p_num(&q, 1);
    p_bytes(&q, op->data), p_num(&q, 0), p_num(&q, now);
    PGresult *r = begin_with(c->w, stmt_names[S_INSERT_LINK], &q);
    if (!ok(c->w, r)) {
        int dup = is_dup_key(r);
        PQclear(r);
        rollback(c->w);
        return dup ? 0 : -1;
    }
    PQclear(r);
    p_init(&q), p_num(&q, op->a), p_num(&q, op->t), p_num(&q, 1), p_num(&q, now), p_num(&q, 1), p_num(&q, now);
    r = ex(c->w, stmt_names[S_COUNT_ADD], &q);
    int done = ok(c->w, r) && simple(c->w, "COMMIT");
    PQclear(r);
    if (!done) rollback(c->w);
    return done ? 1 : -1;
}

/* the link locked (SELECT … FOR UPDATE) in a new transaction: its visibility, -1 none
 * (rolled back), -2 an error (rolled back) */
static int lock_link(Conn *c, const lop_t *op) {
    params_t q;
    p_init(&q), p_link(&q, op);
    PGresult *r = begin_with(c->w, stmt_names[S_GET_VIS], &q);
    int vis = !rows_ok(c->w, r) ? -2 : PQntuples(r) ? atoi(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    if (vis < 0) rollback(c->w);
    return vis;
}

/* the count of (id1, link_type) changed by d */
static int count_change(Conn *c, const lop_t *op, int d, int64_t now) {
    params_t q;
    p_init(&q), p_num(&q, d), p_num(&q, now), p_num(&q, op->a), p_num(&q, op->t);
    PGresult *r = ex(c->w, stmt_names[S_COUNT_CHANGE], &q);
    int done = ok(c->w, r);
    PQclear(r);
    return done;
}

/* updateLinkImpl: 1 updated, 0 no link (rolled back), -1 an error */
static int update_link(Conn *c, const lop_t *op) {
    int vis = lock_link(c, op);
    if (vis < 0) return vis == -1 ? 0 : -1;
    int64_t now = wall_ms();
    params_t q;
    p_init(&q), p_num(&q, 1), p_bytes(&q, op->data), p_num(&q, 0), p_num(&q, now), p_link(&q, op);
    PGresult *r = ex(c->w, stmt_names[S_UPDATE_LINK], &q);
    int done = ok(c->w, r), same = done && !changed(r);
    PQclear(r);
    if (same) {   /* nothing changed: nothing to commit */
        rollback(c->w);
        return 1;
    }
    done = done && (vis == 1 || count_change(c, op, 1, now)) && simple(c->w, "COMMIT");
    if (!done) rollback(c->w);
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
        if (vis >= 0) rollback(c->w);
        return ST_EMPTY;
    }
    params_t q;
    p_init(&q), p_link(&q, op);
    PGresult *r = ex(c->w, stmt_names[S_HIDE_LINK], &q);
    int done = ok(c->w, r) && count_change(c, op, -1, wall_ms()) && simple(c->w, "COMMIT");
    PQclear(r);
    if (!done) rollback(c->w);
    return done ? ST_OK : ST_ERROR;
}

/* a read: its status (OK with rows, else EMPTY), the rows into plan->rows[i] */
static int read_rows(Conn *c, Plan *p, Py_ssize_t i, const char *name, const params_t *q) {
    const lop_t *op = &p->ops[i];
    PGresult *r = ex(c->pg, name, q);
    if (!rows_ok(c->pg, r)) {
        PQclear(r);
        return ST_ERROR;
    }
    int n = PQntuples(r), st = n ? ST_OK : ST_EMPTY;
    p->rows[i] = n;
    if (op->code == GET_LINKS_LIST && n >= atoll(c->limit))
        p->last[i] = atoll(PQgetvalue(r, n - 1, LINK_TIME));
    else if (op->code == GET_NODE && (!n || strcmp(PQgetvalue(r, 0, 1), NODE_TYPE) != 0))
        st = ST_EMPTY;
    PQclear(r);
    return st;
}

/* a node write: OK where it matched rows (ADD_NODE: where it ran), else EMPTY */
static int node_write(Conn *c, int s, const params_t *q) {
    PGresult *r = ex(c->pg, stmt_names[s], q);
    int st = !ok(c->pg, r) ? ST_ERROR : s == S_ADD_NODE || changed(r) ? ST_OK : ST_EMPTY;
    PQclear(r);
    return st;
}

/* request i of the plan (_loop.h's op_fn) */
static int lb_op(void *conn, PlanHead *ph, Py_ssize_t i) {
    Conn *c = conn;
    Plan *p = (Plan *)ph;
    const lop_t *op = &p->ops[i];
    params_t q;
    char name[16];
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
        st = read_rows(c, p, i, stmt_names[S_COUNT_LINKS], &q);
        break;
    case MULTIGET_LINK: {
        if (!c->multi[op->nm]) {
            snprintf(last_err, sizeof last_err, "MULTIGET_LINK of %d id2s not prepared", op->nm);
            st = ST_ERROR;
            break;
        }
        snprintf(name, sizeof name, "m%d", op->nm);
        char (*txt)[24] = malloc((size_t)(op->nm + 2) * 24);
        const char **v = malloc((size_t)(op->nm + 2) * sizeof *v);
        if (!txt || !v) {
            free(txt), free(v);
            snprintf(last_err, sizeof last_err, "out of memory");
            st = ST_ERROR;
            break;
        }
        int64_t head[2] = {op->a, op->t};
        for (int j = 0; j < op->nm + 2; j++) {
            snprintf(txt[j], 24, "%lld", (long long)(j < 2 ? head[j] : p->ids[op->m + j - 2]));
            v[j] = txt[j];
        }
        PGresult *r = c->pg ? PQexecPrepared(c->pg, name, op->nm + 2, v, NULL, NULL, 0) : NULL;
        free(txt), free(v);
        st = !rows_ok(c->pg, r) ? ST_ERROR : PQntuples(r) ? ST_OK : ST_EMPTY;
        p->rows[i] = st == ST_ERROR ? 0 : PQntuples(r);
        PQclear(r);
        break;
    }
    case GET_LINKS_LIST:
        p_num(&q, op->a), p_num(&q, op->t), p_num(&q, 0), p_num(&q, op->b), p_str(&q, c->limit), p_num(&q, op->off);
        st = read_rows(c, p, i, stmt_names[S_LIST], &q);
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
        st = read_rows(c, p, i, stmt_names[S_GET_NODE], &q);
    }
    p->tend[i] = now_ns();
    if (st == ST_ERROR && last_err[0]) keep_error(p, i, last_err);
    return st;
}

#endif
