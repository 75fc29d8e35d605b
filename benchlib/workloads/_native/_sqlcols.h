/* A Plan (_sqlplan.h) made from a chunk's columns rather than its argument tuples:
 * Plan.columns(…), what YCSB's run clients hand the SQL loops (workloads/ycsb/columns.py).
 *
 * Plan(codes, args, …) takes one tuple per operation, its key and each value a bytes
 * object: a chunk of 20,000 operations costs the client's interpreter some 40,000
 * objects and their garbage collections, about 1 µs per operation of the client's CPU
 * before the loop sends anything (BENCHMARKS.md, "YCSB A's client CPU"). Here the chunk
 * comes as a few packed arrays, and the plan writes the statements' text parameters
 * itself, into one buffer of its own:
 *   - a key: prefix + the decimal of its number, left-padded with '0' to zeropadding
 *     characters (Python's str(n).rjust(zeropadding, "0"), CoreWorkload.buildKeyName);
 *   - a value: `length` bytes of the value pool from `offset` (ValuePool's slices).
 * The parameters are in the order parse_op puts them (_sqlplan.h), so the loops and
 * what they send are the same whichever way the plan was made.
 */
#ifndef SQLCOLS_H
#define SQLCOLS_H

/* the decimal of v into d (24 bytes, not terminated): its length (as "%lld") */
static int decimal(char *d, long long v) {
    char t[24];
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    int n = 0, k = 0;
    do t[n++] = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) d[k++] = '-';
    while (n) d[k++] = t[--n];
    return k;
}

static char *put_key(char *dst, const char *prefix, size_t np, long long v, int pad) {
    char d[24];
    int n = decimal(d, v);
    memcpy(dst, prefix, np);
    dst += np;
    for (int j = n; j < pad; j++) *dst++ = '0';
    memcpy(dst, d, (size_t)n);
    dst[n] = 0;
    return dst + n + 1;
}

/* Plan.columns(codes, kinds, nfields, prefix, zeropadding, keynums, fields, write_fields,
 *              scan_lengths, n_values, pool, value_offsets, value_lengths):
 * codes uint8, keynums int64 (the key's number, hashed already where the keys are),
 * fields and write_fields int16 (-1: all), scan_lengths int32, n_values int16, one each
 * per operation; value_offsets and value_lengths int64, one per value, in operation order
 * (an operation's n_values of them: its values, as the tuples' `values`). */
static PyObject *plan_columns(PyTypeObject *type, PyObject *args) {
    Py_buffer b[10] = {{0}};
    const char *prefix;
    Py_ssize_t nprefix;
    int nf, pad;
    Plan *p = NULL;
    if (!PyArg_ParseTuple(args, "y*y*is#iy*y*y*y*y*y*y*y*", &b[0], &b[1], &nf, &prefix, &nprefix, &pad, &b[2],
                          &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9]))
        goto out;
    Py_ssize_t n = b[0].len, nv = b[8].len / 8;
    const uint8_t *codes = b[0].buf, *km = b[1].buf;
    const int64_t *keys = b[2].buf, *voff = b[8].buf, *vlen = b[9].buf;
    const int16_t *fld = b[3].buf, *wfld = b[4].buf, *nval = b[6].buf;
    const int32_t *slen = b[5].buf;
    const char *pool = b[7].buf;
    if (b[2].len != 8 * n || b[3].len != 2 * n || b[4].len != 2 * n || b[5].len != 4 * n || b[6].len != 2 * n
        || b[9].len != 8 * nv || pad < 0 || pad > 64 || nf < 1) {
        PyErr_SetString(PyExc_ValueError, "columns of unequal lengths (or zeropadding past 64)");
        goto out;
    }
    size_t room = 0;
    Py_ssize_t v = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int k = codes[i] < b[1].len ? km[codes[i]] : NKINDS;
        int want = k == K_INSERT ? nf : (k == K_UPDATE || k == K_RMW) ? (wfld[i] < 0 ? nf : 1) : 0;
        if (k >= K_COUNT || nval[i] != want || v + want > nv || fld[i] < -1 || fld[i] >= nf || wfld[i] < -1
            || wfld[i] >= nf) {
            PyErr_Format(PyExc_ValueError, "operation %zd: code %d, %d values or field out of range", i,
                         (int)codes[i], (int)nval[i]);
            goto out;
        }
        room += (size_t)nprefix + (size_t)(pad > 20 ? pad : 20) + 1;   /* a key: at most 20 digits */
        for (int j = 0; j < want; j++, v++) {
            if (voff[v] < 0 || vlen[v] < 0 || voff[v] + vlen[v] > b[7].len) {
                PyErr_Format(PyExc_ValueError, "value %zd outside the pool", v);
                goto out;
            }
            room += (size_t)vlen[v] + 1;
        }
    }
    if (v != nv) {
        PyErr_SetString(PyExc_ValueError, "more values than the operations take");
        goto out;
    }
    p = (Plan *)type->tp_alloc(type, 0);
    if (!p) goto out;
    p->nf = nf;
    p->ops = calloc(n + 1, sizeof *p->ops);
    p->params = calloc(n * ((size_t)nf + 3) + 1, sizeof *p->params);
    p->nums = calloc(2 * n + 1, sizeof *p->nums);
    p->arena = malloc(room + 1);
    if (outcomes_alloc((PlanHead *)p, n, 1) || !p->ops || !p->params || !p->nums || !p->arena) {
        PyErr_NoMemory();
        Py_CLEAR(p);
        goto out;
    }
    char *w = p->arena;
    Py_ssize_t np = 0;
    v = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        op_t *op = &p->ops[i];
        int k = km[codes[i]], nvi = nval[i];
        const char **pa = p->params + np, *key = w;
        w = put_key(w, prefix, (size_t)nprefix, keys[i], pad);
        const char **vals = pa + (k == K_UPDATE ? 0 : 1);   /* update [values…, key]; else [key, values…] */
        for (int j = 0; j < nvi; j++, v++) {
            memcpy(w, pool + voff[v], (size_t)vlen[v]);
            w[vlen[v]] = 0;
            vals[j] = w;
            w += vlen[v] + 1;
        }
        p->codes[i] = (int8_t)codes[i];
        op->kind = (int8_t)k;
        op->p = (int32_t)np;
        op->f1 = fld[i] + 1;
        op->f2 = 1;   /* as parse_op: only a read-modify-write's is read */
        switch (k) {
        case K_READ: pa[0] = key; op->np1 = 1; break;
        case K_SCAN:
            p->nums[2 * i][decimal(p->nums[2 * i], slen[i])] = 0;
            pa[0] = key;
            pa[1] = p->nums[2 * i];
            op->np1 = 2;
            break;
        case K_UPDATE: pa[nvi] = key; op->np1 = (int16_t)(nvi + 1); op->f1 = wfld[i] + 1; break;
        case K_INSERT: pa[0] = key; op->np1 = (int16_t)(nf + 1); op->f1 = 1; break;
        default:  /* K_RMW: the read takes [key], the update [values…, key] */
            pa[0] = pa[nvi + 1] = key;
            op->np1 = 1;
            op->np2 = (int16_t)(nvi + 1);
            op->f2 = wfld[i] + 1;
            break;
        }
        np += op->np1 + op->np2;
    }
out:
    for (int j = 0; j < 10; j++)
        if (b[j].obj) PyBuffer_Release(&b[j]);
    return (PyObject *)p;
}

#endif
