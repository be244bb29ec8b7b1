/* The JSON text of a step's dump files: each file's text, the statistics text of every slot and the
 * texts of every tensor entry, one call each (core.dump_writer and core.stats keep the same functions in
 * Python, the reference, used where this is not built or refuses a value).
 *
 * The writer thread makes these texts while training goes on, and any Python code it runs holds the GIL:
 * hundreds of small Python calls per step (one encoder call per record, a format per tensor entry) took
 * most of the writer's CPU time. Here they take one call each. The statistics texts are made straight from
 * the packed rows the capture hands over (no Python number per value); their floats are spelled by one
 * call of an encoder (orjson where installed: shortest round-trip texts, as Python's repr but for the
 * exponent's form).
 *
 * Values as Python's json writes them, compact as orjson writes them: None, bool, int, float (NaN and
 * infinities as NaN, Infinity, -Infinity), str (UTF-8), list and tuple (arrays), dict with str keys.
 * Anything else raises TypeError, and the caller falls back to Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define MAX_DEPTH 200

typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Buffer;

static int reserve(Buffer *b, Py_ssize_t more) {
    if (b->size + more <= b->capacity)
        return 0;
    Py_ssize_t capacity = b->capacity ? b->capacity : 4096;
    while (capacity < b->size + more)
        capacity *= 2;
    char *data = PyMem_Realloc(b->data, (size_t)capacity);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->capacity = capacity;
    return 0;
}

static int append(Buffer *b, const char *text, Py_ssize_t size) {
    if (reserve(b, size) < 0)
        return -1;
    memcpy(b->data + b->size, text, (size_t)size);
    b->size += size;
    return 0;
}

#define APPEND_LITERAL(b, text) append((b), (text), (Py_ssize_t)(sizeof(text) - 1))

/* lines_object's buffer, kept between calls (every call holds the GIL throughout): a step's dump.json is
 * hundreds of kilobytes at L1, and memory of that size freshly mapped at each step costs more page faults
 * than the text costs to make */
static Buffer kept;
#define KEPT_LIMIT (64 << 20)

static void release(Buffer *b) {
    if (b->capacity > KEPT_LIMIT) {
        PyMem_Free(b->data);
        b->data = NULL;
        b->capacity = 0;
    }
    b->size = 0;
}

static int append_string(Buffer *b, PyObject *text) {
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);  /* fails on lone surrogates: Python's json takes those */
    if (utf8 == NULL || reserve(b, 6 * size + 2) < 0)
        return -1;
    char *out = b->data + b->size;
    *out++ = '"';
    for (Py_ssize_t i = 0; i < size;) {
        Py_ssize_t run = i;
        while (run < size && (unsigned char)utf8[run] >= 0x20 && utf8[run] != '"' && utf8[run] != '\\')
            run++;
        memcpy(out, utf8 + i, (size_t)(run - i));
        out += run - i;
        if (run == size)
            break;
        unsigned char c = (unsigned char)utf8[run];
        i = run + 1;
        *out++ = '\\';
        switch (c) {
        case '"': *out++ = '"'; break;
        case '\\': *out++ = '\\'; break;
        case '\n': *out++ = 'n'; break;
        case '\r': *out++ = 'r'; break;
        case '\t': *out++ = 't'; break;
        case '\b': *out++ = 'b'; break;
        case '\f': *out++ = 'f'; break;
        default:
            out += sprintf(out, "u%04x", c);
        }
    }
    *out++ = '"';
    b->size = out - b->data;
    return 0;
}

static int append_float(Buffer *b, double value) {
    if (isnan(value))
        return APPEND_LITERAL(b, "NaN");
    if (isinf(value))
        return value > 0 ? APPEND_LITERAL(b, "Infinity") : APPEND_LITERAL(b, "-Infinity");
    char *text = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);  /* float.__repr__ */
    if (text == NULL)
        return -1;
    int failed = append(b, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return failed;
}

static int append_int(Buffer *b, PyObject *value) {
    int overflow;
    long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (number == -1 && PyErr_Occurred())
        return -1;
    if (!overflow) {
        char text[24];
        return append(b, text, snprintf(text, sizeof text, "%lld", number));
    }
    PyObject *text = PyLong_Type.tp_repr(value);
    if (text == NULL)
        return -1;
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    int failed = utf8 == NULL ? -1 : append(b, utf8, size);
    Py_DECREF(text);
    return failed;
}

/* a JSON scalar: None, a bool, a float or an int (anything else: TypeError) */
static int append_number(Buffer *b, PyObject *value) {
    if (value == Py_None)
        return APPEND_LITERAL(b, "null");
    if (value == Py_True)
        return APPEND_LITERAL(b, "true");
    if (value == Py_False)
        return APPEND_LITERAL(b, "false");
    if (PyFloat_Check(value))
        return append_float(b, PyFloat_AS_DOUBLE(value));
    if (PyLong_Check(value))
        return append_int(b, value);
    PyErr_Format(PyExc_TypeError, "not a JSON number: %.100s", Py_TYPE(value)->tp_name);
    return -1;
}

typedef struct {
    PyObject *entries;  /* list of bytes, or NULL */
    const char *token;  /* an entry's token: this text, then the entry's number */
    Py_ssize_t token_size;
} Entries;

/* the entry's text when `text` is a token (1), else 0; -1 on error */
static int append_entry(Buffer *b, PyObject *text, const Entries *entries) {
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 == NULL)
        return -1;
    if (size <= entries->token_size || memcmp(utf8, entries->token, (size_t)entries->token_size) != 0)
        return 0;
    Py_ssize_t number = 0;
    for (Py_ssize_t i = entries->token_size; i < size; i++) {
        if (utf8[i] < '0' || utf8[i] > '9' || number > PY_SSIZE_T_MAX / 10 - 1)
            return 0;
        number = number * 10 + (utf8[i] - '0');
    }
    if (number >= PyList_GET_SIZE(entries->entries)) {
        PyErr_Format(PyExc_IndexError, "no entry %zd", number);
        return -1;
    }
    PyObject *entry = PyList_GET_ITEM(entries->entries, number);
    if (!PyBytes_Check(entry)) {
        PyErr_SetString(PyExc_TypeError, "entries must be bytes");
        return -1;
    }
    return append(b, PyBytes_AS_STRING(entry), PyBytes_GET_SIZE(entry)) < 0 ? -1 : 1;
}

static int append_value(Buffer *b, PyObject *value, const Entries *entries, int depth);

static int append_member(Buffer *b, PyObject *key, PyObject *value, int first, const Entries *entries, int depth) {
    if (!PyUnicode_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "object keys must be str");
        return -1;
    }
    if ((!first && APPEND_LITERAL(b, ",") < 0) || append_string(b, key) < 0 || APPEND_LITERAL(b, ":") < 0)
        return -1;
    return append_value(b, value, entries, depth);
}

/* a flat (key, value, key, value, ...) tuple as an object */
static int append_flat(Buffer *b, PyObject *pairs, const Entries *entries, int depth) {
    Py_ssize_t size = PyTuple_GET_SIZE(pairs);
    if (size % 2) {
        PyErr_SetString(PyExc_ValueError, "a flat record has an odd length");
        return -1;
    }
    if (APPEND_LITERAL(b, "{") < 0)
        return -1;
    for (Py_ssize_t i = 0; i < size; i += 2)
        if (append_member(b, PyTuple_GET_ITEM(pairs, i), PyTuple_GET_ITEM(pairs, i + 1), i == 0, entries, depth) < 0)
            return -1;
    return APPEND_LITERAL(b, "}");
}

static int append_value(Buffer *b, PyObject *value, const Entries *entries, int depth) {
    if (depth > MAX_DEPTH) {
        PyErr_SetString(PyExc_ValueError, "nested too deeply");
        return -1;
    }
    if (PyUnicode_Check(value)) {
        int done = entries->entries != NULL ? append_entry(b, value, entries) : 0;
        return done != 0 ? (done < 0 ? -1 : 0) : append_string(b, value);
    }
    if (PyTuple_Check(value) || PyList_Check(value)) {
        PyObject **items = PySequence_Fast_ITEMS(value);
        Py_ssize_t size = PySequence_Fast_GET_SIZE(value);
        if (APPEND_LITERAL(b, "[") < 0)
            return -1;
        for (Py_ssize_t i = 0; i < size; i++)
            if ((i && APPEND_LITERAL(b, ",") < 0) || append_value(b, items[i], entries, depth + 1) < 0)
                return -1;
        return APPEND_LITERAL(b, "]");
    }
    if (PyDict_Check(value)) {
        PyObject *key, *item;
        Py_ssize_t position = 0;
        int first = 1;
        if (APPEND_LITERAL(b, "{") < 0)
            return -1;
        while (PyDict_Next(value, &position, &key, &item)) {
            if (append_member(b, key, item, first, entries, depth + 1) < 0)
                return -1;
            first = 0;
        }
        return APPEND_LITERAL(b, "}");
    }
    return append_number(b, value);
}

PyDoc_STRVAR(lines_object_doc,
             "lines_object(mapping, flat=False, entries=None, token=None, prefix=b'', suffix=b'\\n')\n\n"
             "`prefix`, a JSON object with one member per line (core.dump_writer's layout), then `suffix`. With\n"
             "`flat`, tuple values are flat (key, value, ...) records; with `entries` (a list of bytes), a\n"
             "string that is `token` followed by a number n is written as the JSON text entries[n].");

static PyObject *lines_object(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"mapping", "flat", "entries", "token", "prefix", "suffix", NULL};
    PyObject *mapping, *entries_list = Py_None, *token = Py_None;
    int flat = 0;
    Py_buffer prefix = {0}, suffix = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|pOOy*y*", keywords, &PyDict_Type, &mapping, &flat,
                                     &entries_list, &token, &prefix, &suffix))
        return NULL;
    PyObject *result = NULL;
    Entries entries = {NULL, NULL, 0};
    Buffer *b = &kept;
    PyObject *key, *value;
    Py_ssize_t position = 0;
    if (entries_list != Py_None) {
        if (!PyList_Check(entries_list) || !PyUnicode_Check(token)) {
            PyErr_SetString(PyExc_TypeError, "entries must be a list, with a str token");
            goto done;
        }
        entries.entries = entries_list;
        entries.token = PyUnicode_AsUTF8AndSize(token, &entries.token_size);
        if (entries.token == NULL)
            goto done;
    }
    if ((prefix.buf && append(b, prefix.buf, prefix.len) < 0) ||
        (PyDict_GET_SIZE(mapping) ? APPEND_LITERAL(b, "{\n") : APPEND_LITERAL(b, "{")) < 0)
        goto done;
    for (int first = 1; PyDict_Next(mapping, &position, &key, &value); first = 0) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "object keys must be str");
            goto done;
        }
        if ((!first && APPEND_LITERAL(b, ",\n") < 0) || append_string(b, key) < 0 || APPEND_LITERAL(b, ": ") < 0)
            goto done;
        if (flat && PyTuple_Check(value) ? append_flat(b, value, &entries, 1) : append_value(b, value, &entries, 1))
            goto done;
    }
    if ((PyDict_GET_SIZE(mapping) ? APPEND_LITERAL(b, "\n}") : APPEND_LITERAL(b, "}")) == 0 &&
        (suffix.buf ? append(b, suffix.buf, suffix.len) : APPEND_LITERAL(b, "\n")) == 0)
        result = PyBytes_FromStringAndSize(b->data, b->size);
done:
    release(b);
    if (prefix.buf)
        PyBuffer_Release(&prefix);
    if (suffix.buf)
        PyBuffer_Release(&suffix);
    return result;
}

/* how a slot's statistics are written, from its kind's first letter (core.stats' KIND_FLOAT "float",
 * KIND_INT "int", KIND_BOOL "bool", KIND_NONE "none") and its element count */
enum { NULLS, BOOLS, INTEGERS, INTEGER_SCALAR, FLOATS };

static int slot_code(PyObject *kind, PyObject *numel, PyObject *scalar) {
    Py_UCS4 code = PyUnicode_Check(kind) && PyUnicode_GET_LENGTH(kind) ? PyUnicode_READ_CHAR(kind, 0) : 'n';
    int empty = PyObject_Not(numel), is_scalar = PyObject_IsTrue(scalar);
    if (empty < 0 || is_scalar < 0)
        return -1;
    if (code == 'n' || empty)
        return NULLS;
    if (code == 'b')
        return BOOLS;
    if (code == 'i')
        return is_scalar ? INTEGER_SCALAR : INTEGERS;
    return FLOATS;
}

static int same_length(PyObject *const *lists, int count, Py_ssize_t size) {
    for (int i = 0; i < count; i++)
        if (!PyList_Check(lists[i]) || PyList_GET_SIZE(lists[i]) != size) {
            PyErr_SetString(PyExc_ValueError, "the lists must be lists of one length");
            return 0;
        }
    return 1;
}

/* the texts of a JSON array of numbers, `[a,b,...]` or `[a, b, ...]`: starts[i] and ends[i] of each */
static int split_numbers(const char *text, Py_ssize_t size, Py_ssize_t count, Py_ssize_t *starts, Py_ssize_t *ends) {
    Py_ssize_t at = 1, found = 0;
    if (size < 2 || text[0] != '[' || text[size - 1] != ']')
        goto bad;
    while (found < count && at < size - 1) {
        while (text[at] == ' ')
            at++;
        starts[found] = at;
        while (at < size - 1 && text[at] != ',')
            at++;
        ends[found++] = at++;
    }
    if (found == count && at >= size - 1)
        return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "format_floats did not give one number per value");
    return -1;
}

/* one value of a float slot: NaN and infinities as Python's json writes them, else the formatter's text */
static int append_float_text(Buffer *b, double value, const char *text, Py_ssize_t size) {
    if (isnan(value) || isinf(value))
        return append_float(b, value);
    return append(b, text, size);
}

static int append_long(Buffer *b, long long value) {
    char text[24];
    return append(b, text, snprintf(text, sizeof text, "%lld", value));
}

PyDoc_STRVAR(statistics_texts_doc,
             "statistics_texts(kinds, numels, scalars, floats, ints, format_floats)\n\n"
             "Per slot (one item of each list), its statistics as entry text, as core.stats.statistics_texts\n"
             "makes it. `floats` is (slots, values): the slots of float tensors and, as float64 bytes, four values\n"
             "each (max, min, sum, norm); `ints` the same for integer and bool tensors, as int64 (max, min, and two\n"
             "unread). The floats are written by `format_floats`, called once with every slot's Max, Min, Mean and\n"
             "Norm as float64 bytes, which returns them as a JSON array.");

/* rows[slot] = the slot's four values, for each slot of `pair` (slots, values as bytes) */
static int scatter_rows(PyObject *pair, void *rows, Py_ssize_t size) {
    PyObject *slots, *values;
    if (!PyArg_ParseTuple(pair, "OS", &slots, &values))
        return -1;
    Py_ssize_t count = PyList_Check(slots) ? PyList_GET_SIZE(slots) : -1;
    if (count < 0 || PyBytes_GET_SIZE(values) != count * 32) {
        PyErr_SetString(PyExc_ValueError, "floats and ints must be a list of slots and four values per slot");
        return -1;
    }
    const char *source = PyBytes_AS_STRING(values);
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyList_GET_ITEM(slots, k));
        if (slot < 0 || slot >= size) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_IndexError, "a slot out of range");
            return -1;
        }
        memcpy((char *)rows + 32 * slot, source + 32 * k, 32);
    }
    return 0;
}

static PyObject *statistics_texts(PyObject *self, PyObject *args) {
    PyObject *lists[3], *pairs[2], *format_floats, *result = NULL, *numbers = NULL, *text = NULL;
    Py_ssize_t *starts = NULL, *ends = NULL;
    char *codes = NULL;
    long long *int_rows = NULL;
    Buffer b = {NULL, 0, 0};
    if (!PyArg_ParseTuple(args, "OOOO!O!O", &lists[0], &lists[1], &lists[2], &PyTuple_Type, &pairs[0], &PyTuple_Type,
                          &pairs[1], &format_floats))
        return NULL;
    Py_ssize_t size = PyList_Check(lists[0]) ? PyList_GET_SIZE(lists[0]) : 0;
    if (!same_length(lists, 3, size))
        goto done;
    numbers = PyBytes_FromStringAndSize(NULL, size * 4 * (Py_ssize_t)sizeof(double));
    int_rows = PyMem_Calloc((size_t)size + 1, 4 * sizeof(long long));
    codes = PyMem_Malloc((size_t)size + 1);
    starts = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(4 * size + 1));
    ends = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(4 * size + 1));
    if (numbers == NULL || int_rows == NULL || codes == NULL || starts == NULL || ends == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    double *values = (double *)PyBytes_AS_STRING(numbers);
    for (Py_ssize_t i = 0; i < 4 * size; i++)
        values[i] = NAN;
    if (scatter_rows(pairs[0], values, size) < 0 || scatter_rows(pairs[1], int_rows, size) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < size; i++) {  /* each slot's Max, Min, Mean, Norm where they are floats */
        int code = slot_code(PyList_GET_ITEM(lists[0], i), PyList_GET_ITEM(lists[1], i), PyList_GET_ITEM(lists[2], i));
        if (code < 0)
            goto done;
        codes[i] = (char)code;
        double *row = values + 4 * i;
        if (code == FLOATS) {
            Py_ssize_t numel = PyLong_AsSsize_t(PyList_GET_ITEM(lists[1], i));
            if (numel == -1 && PyErr_Occurred())
                goto done;
            row[2] /= (double)numel;
        } else if (code == INTEGER_SCALAR) {  /* a 0-d integer: its value, and its magnitude */
            row[2] = (double)int_rows[4 * i];
            row[3] = fabs(row[2]);
        }
    }
    text = PyObject_CallOneArg(format_floats, numbers);
    if (text == NULL)
        goto done;
    if (!PyBytes_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "format_floats must return bytes");
        goto done;
    }
    const char *json = PyBytes_AS_STRING(text);
    if (split_numbers(json, PyBytes_GET_SIZE(text), 4 * size, starts, ends) < 0)
        goto done;
    result = PyList_New(size);
    for (Py_ssize_t i = 0; result != NULL && i < size; i++) {
        static const char *keys[4] = {"\"Max\": ", ", \"Min\": ", ", \"Mean\": ", ", \"Norm\": "};
        const double *row = values + 4 * i;
        const long long *int_row = int_rows + 4 * i;
        int failed = 0;
        b.size = 0;
        for (int v = 0; v < 4 && !failed; v++) {
            failed = append(&b, keys[v], (Py_ssize_t)strlen(keys[v]));
            if (failed)
                break;
            Py_ssize_t at = 4 * i + v;
            switch (codes[i]) {
            case BOOLS:  /* Max = any, Min = all */
                failed = v < 2 ? (int_row[v] ? APPEND_LITERAL(&b, "true") : APPEND_LITERAL(&b, "false"))
                               : APPEND_LITERAL(&b, "null");
                break;
            case INTEGERS:
            case INTEGER_SCALAR:  /* Mean and Norm only for a 0-d tensor */
                failed = v < 2 ? append_long(&b, int_row[v])
                         : codes[i] == INTEGER_SCALAR ? append(&b, json + starts[at], ends[at] - starts[at])
                                                      : APPEND_LITERAL(&b, "null");
                break;
            case FLOATS:
                failed = append_float_text(&b, row[v], json + starts[at], ends[at] - starts[at]);
                break;
            default:
                failed = APPEND_LITERAL(&b, "null");
            }
        }
        PyObject *item = failed ? NULL : PyBytes_FromStringAndSize(b.data, b.size);
        if (item == NULL)
            Py_CLEAR(result);
        else
            PyList_SET_ITEM(result, i, item);
    }
done:
    Py_XDECREF(numbers);
    PyMem_Free(int_rows);
    Py_XDECREF(text);
    PyMem_Free(codes);
    PyMem_Free(starts);
    PyMem_Free(ends);
    PyMem_Free(b.data);
    return result;
}

PyDoc_STRVAR(entry_texts_doc,
             "entry_texts(slots, heads, statistics, requires_grad, extras=None)\n\n"
             "Per entry, its JSON text: the head and statistics text of its slot (`heads` and `statistics`\n"
             "are per slot), its requires_grad, then its extra text (core.stats.entry_texts).");

static int append_bytes(Buffer *b, PyObject *text) {
    if (!PyBytes_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "heads, statistics and extras must be bytes");
        return -1;
    }
    return append(b, PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text));
}

static PyObject *entry_texts(PyObject *self, PyObject *args) {
    PyObject *slots, *heads, *statistics, *grads, *extras = Py_None;
    if (!PyArg_ParseTuple(args, "OOOO|O", &slots, &heads, &statistics, &grads, &extras))
        return NULL;
    Py_ssize_t size = PyList_Check(slots) ? PyList_GET_SIZE(slots) : 0;
    Py_ssize_t slot_count = PyList_Check(heads) ? PyList_GET_SIZE(heads) : 0;
    PyObject *per_entry[3] = {slots, grads, extras == Py_None ? slots : extras}, *per_slot[2] = {heads, statistics};
    if (!same_length(per_entry, 3, size) || !same_length(per_slot, 2, slot_count))
        return NULL;
    PyObject *texts = PyList_New(size);
    Buffer b = {NULL, 0, 0};
    for (Py_ssize_t i = 0; texts != NULL && i < size; i++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyList_GET_ITEM(slots, i));
        if ((slot < 0 || slot >= slot_count) && !PyErr_Occurred())
            PyErr_SetString(PyExc_IndexError, "a slot out of range");
        int grad = PyErr_Occurred() ? -1 : PyObject_IsTrue(PyList_GET_ITEM(grads, i));
        PyObject *text = NULL;
        b.size = 0;
        if (grad >= 0 && append_bytes(&b, PyList_GET_ITEM(heads, slot)) == 0 &&
            append_bytes(&b, PyList_GET_ITEM(statistics, slot)) == 0 &&
            (grad ? APPEND_LITERAL(&b, ", \"requires_grad\": true") : APPEND_LITERAL(&b, ", \"requires_grad\": false")) == 0 &&
            (extras == Py_None || append_bytes(&b, PyList_GET_ITEM(extras, i)) == 0) && APPEND_LITERAL(&b, "}") == 0)
            text = PyBytes_FromStringAndSize(b.data, b.size);
        if (text == NULL)
            Py_CLEAR(texts);
        else
            PyList_SET_ITEM(texts, i, text);
    }
    PyMem_Free(b.data);
    return texts;
}

static PyMethodDef methods[] = {
    {"lines_object", (PyCFunction)(void (*)(void))lines_object, METH_VARARGS | METH_KEYWORDS, lines_object_doc},
    {"statistics_texts", statistics_texts, METH_VARARGS, statistics_texts_doc},
    {"entry_texts", entry_texts, METH_VARARGS, entry_texts_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dumptext",
                                    "The JSON text of a step's dump files, in one call each.", -1, methods};

PyMODINIT_FUNC PyInit__dumptext(void) { return PyModule_Create(&module); }
