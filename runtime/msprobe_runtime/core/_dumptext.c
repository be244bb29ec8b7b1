/* The JSON text of a step's dump files: each file's text, the statistics values of every slot and the
 * texts of every tensor entry, one call each (core.dump_writer and core.stats keep the same functions in
 * Python, the reference, used where this is not built or refuses a value).
 *
 * The writer thread makes these texts while training goes on, and any Python code it runs holds the GIL:
 * hundreds of small Python calls per step (one encoder call per record, a format per tensor entry) took
 * most of the writer's CPU time. Here they take one call each.
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

/* Max, Min, Mean, Norm of one slot into values[4] (new references; NULL for null), as
 * core.stats.statistics_values makes them; a kind is told by its first letter (core.stats' KIND_FLOAT
 * "float", KIND_INT "int", KIND_BOOL "bool", KIND_NONE "none") */
static int slot_statistics(PyObject **values, PyObject *kind, PyObject *numel, int scalar, PyObject *high,
                           PyObject *low, PyObject *total, PyObject *norm) {
    Py_UCS4 code = PyUnicode_Check(kind) && PyUnicode_GET_LENGTH(kind) ? PyUnicode_READ_CHAR(kind, 0) : 'n';
    int empty = PyObject_Not(numel);
    if (empty < 0)
        return -1;
    if (code == 'n' || empty)  /* KIND_NONE, or no elements */
        return 0;
    if (code == 'b') {  /* KIND_BOOL: Max = any, Min = all */
        int any = PyObject_IsTrue(high), all = PyObject_IsTrue(low);
        if (any < 0 || all < 0)
            return -1;
        values[0] = PyBool_FromLong(any);
        values[1] = PyBool_FromLong(all);
        return 0;
    }
    if (code == 'i') {  /* KIND_INT: Mean and Norm only for a 0-d tensor, its value */
        values[0] = PyNumber_Long(high);
        values[1] = values[0] ? PyNumber_Long(low) : NULL;
        if (values[1] == NULL)
            return -1;
        if (!scalar)
            return 0;
        PyObject *magnitude = PyNumber_Absolute(high);
        values[2] = PyNumber_Float(high);
        values[3] = magnitude ? PyNumber_Float(magnitude) : NULL;
        Py_XDECREF(magnitude);
        return values[2] && values[3] ? 0 : -1;
    }
    values[0] = Py_NewRef(high);  /* KIND_FLOAT */
    values[1] = Py_NewRef(low);
    values[2] = PyNumber_TrueDivide(total, numel);
    values[3] = Py_NewRef(norm);
    return values[2] ? 0 : -1;
}

static int same_length(PyObject *const *lists, int count, Py_ssize_t size) {
    for (int i = 0; i < count; i++)
        if (!PyList_Check(lists[i]) || PyList_GET_SIZE(lists[i]) != size) {
            PyErr_SetString(PyExc_ValueError, "the lists must be lists of one length");
            return 0;
        }
    return 1;
}

PyDoc_STRVAR(statistics_values_doc,
             "statistics_values(kinds, numels, scalars, high, low, total, norm)\n\n"
             "Per slot (one item of each list), its Max, Min, Mean and Norm, four values a slot in one flat\n"
             "list (core.stats.statistics_values).");

static PyObject *statistics_values(PyObject *self, PyObject *args) {
    PyObject *lists[7];
    if (!PyArg_ParseTuple(args, "OOOOOOO", &lists[0], &lists[1], &lists[2], &lists[3], &lists[4], &lists[5],
                          &lists[6]))
        return NULL;
    Py_ssize_t size = PyList_Check(lists[0]) ? PyList_GET_SIZE(lists[0]) : 0;
    if (!same_length(lists, 7, size))
        return NULL;
    PyObject *flat = PyList_New(4 * size);
    for (Py_ssize_t i = 0; flat != NULL && i < size; i++) {
        PyObject *values[4] = {NULL, NULL, NULL, NULL};
        int scalar = PyObject_IsTrue(PyList_GET_ITEM(lists[2], i));
        int failed = scalar < 0 || slot_statistics(values, PyList_GET_ITEM(lists[0], i), PyList_GET_ITEM(lists[1], i),
                                                   scalar, PyList_GET_ITEM(lists[3], i), PyList_GET_ITEM(lists[4], i),
                                                   PyList_GET_ITEM(lists[5], i), PyList_GET_ITEM(lists[6], i));
        for (int v = 0; v < 4; v++)
            PyList_SET_ITEM(flat, 4 * i + v, values[v] ? values[v] : Py_NewRef(Py_None));
        if (failed)
            Py_CLEAR(flat);
    }
    return flat;
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
    {"statistics_values", statistics_values, METH_VARARGS, statistics_values_doc},
    {"entry_texts", entry_texts, METH_VARARGS, entry_texts_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dumptext",
                                    "The JSON text of a step's dump files, in one call each.", -1, methods};

PyMODINIT_FUNC PyInit__dumptext(void) { return PyModule_Create(&module); }
