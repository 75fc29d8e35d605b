/* A statement as libmariadb's loops send it (_myloop.c, _lbmyloop.c): its text split at
 * its %s placeholders once, each value written in place when it is sent
 * (mysql_real_query), as mysqlclient and PyMySQL format statements client-side. */
#ifndef MYTMPL_H
#define MYTMPL_H

/* a statement's text split at its %s placeholders: n + 1 pieces */
typedef struct {
    char *text;
    int n;
    size_t *off, *len;
} tmpl_t;

static void tmpl_free(tmpl_t *t) {
    free(t->text), free(t->off), free(t->len);
    t->text = NULL, t->off = t->len = NULL;
}

static int split_tmpl(tmpl_t *t, PyObject *sql) {
    if (!PyBytes_Check(sql)) {
        PyErr_SetString(PyExc_TypeError, "statements must be bytes");
        return -1;
    }
    const char *s = PyBytes_AS_STRING(sql);
    size_t len = (size_t)PyBytes_GET_SIZE(sql);
    int n = 0;
    for (const char *x = s; (x = strstr(x, "%s")); x += 2) n++;
    t->text = malloc(len + 1);
    t->off = calloc(n + 1, sizeof *t->off);
    t->len = calloc(n + 1, sizeof *t->len);
    if (!t->text || !t->off || !t->len) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(t->text, s, len + 1);
    t->n = n;
    size_t at = 0;
    for (int j = 0; j <= n; j++) {
        const char *x = j < n ? strstr(s + at, "%s") : s + len;
        t->off[j] = at;
        t->len[j] = (size_t)(x - (s + at));
        at = (size_t)(x - s) + 2;
    }
    return 0;
}

#endif
