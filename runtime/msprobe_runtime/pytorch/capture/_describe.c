/* The hot path of capture.stats.StatBuffer.slot in the statistics summary mode, in C: every recorded
 * tensor goes through it (hundreds a step at L1), and in Python its attribute reads, checks and
 * bookkeeping cost more than reading a small tensor's data.
 *
 * Describer(buffer).slot(t, shared) returns the slot of a tensor state recorded before in the step (the
 * same object at the same version, when `shared`), or describes a dense CPU tensor of a dtype that
 * core._hoststats reads at once: a new slot, its statistics appended by _hoststats in one pass over the
 * data, and the state remembered. Anything else returns -1 and StatBuffer keeps the tensor pending. The
 * Describer works on the StatBuffer's own lists and dicts, in the forms its Python code reads and writes
 * (see StatBuffer.slot, _open_slot and _remember, whose steps it follows one for one).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define MAX_DIMS 64

/* core/_hoststats.c's append_statistics, from its capsule */
typedef int (*AppendStatistics)(PyObject *values, const void *data, int64_t count, int dtype);
static AppendStatistics append_statistics;

static PyObject *s_version, *s_dtype, *s_is_cpu, *s_layout, *s_is_neg, *s_is_contiguous, *s_shape,
    *s_stride, *s_data_ptr;

typedef struct {
    PyObject_HEAD
    PyObject *kinds, *numels, *layouts;  /* lists, one item per slot */
    PyObject *cache, *addresses;         /* dicts: id -> (weak reference, version, slot); address -> id or SHARED */
    PyObject *host_slots[2];             /* lists of slots described at once: float, integer */
    PyObject *host_values[2];            /* bytearrays of their statistics */
    PyObject *codes;                     /* dict: dtype -> (_hoststats dtype code, kind) */
    PyObject *plain[2];                  /* the exact tensor classes described: torch.Tensor, torch.nn.Parameter */
    PyObject *strided, *kind_none, *shared_marker;
    Py_ssize_t cache_limit;
    int first_integer;                   /* codes from this on are integers */
} Describer;

static int describer_traverse(Describer *self, visitproc visit, void *arg) {
    Py_VISIT(self->kinds);
    Py_VISIT(self->numels);
    Py_VISIT(self->layouts);
    Py_VISIT(self->cache);
    Py_VISIT(self->addresses);
    for (int i = 0; i < 2; i++) {
        Py_VISIT(self->host_slots[i]);
        Py_VISIT(self->host_values[i]);
        Py_VISIT(self->plain[i]);
    }
    Py_VISIT(self->codes);
    Py_VISIT(self->strided);
    Py_VISIT(self->kind_none);
    Py_VISIT(self->shared_marker);
    return 0;
}

static int describer_clear(Describer *self) {
    Py_CLEAR(self->kinds);
    Py_CLEAR(self->numels);
    Py_CLEAR(self->layouts);
    Py_CLEAR(self->cache);
    Py_CLEAR(self->addresses);
    for (int i = 0; i < 2; i++) {
        Py_CLEAR(self->host_slots[i]);
        Py_CLEAR(self->host_values[i]);
        Py_CLEAR(self->plain[i]);
    }
    Py_CLEAR(self->codes);
    Py_CLEAR(self->strided);
    Py_CLEAR(self->kind_none);
    Py_CLEAR(self->shared_marker);
    return 0;
}

static void describer_dealloc(Describer *self) {
    PyObject_GC_UnTrack(self);
    describer_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *get(PyObject *buffer, const char *name) {
    return PyObject_GetAttrString(buffer, name);
}

/* a two-item tuple attribute of the StatBuffer into out[0], out[1] (new references) */
static int get_pair(PyObject *buffer, const char *name, PyObject **out) {
    PyObject *pair = get(buffer, name);
    if (pair == NULL)
        return -1;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_Format(PyExc_TypeError, "Describer: StatBuffer.%s must be a pair", name);
        Py_DECREF(pair);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        out[i] = PyTuple_GET_ITEM(pair, i);
        Py_INCREF(out[i]);
    }
    Py_DECREF(pair);
    return 0;
}

static int describer_init(Describer *self, PyObject *args, PyObject *kwargs) {
    PyObject *buffer, *plain, *codes, *strided, *kind_none, *shared_marker;
    Py_ssize_t cache_limit;
    int first_integer;
    static char *names[] = {"buffer", "codes", "plain", "strided", "kind_none", "shared_marker", "cache_limit",
                            "first_integer", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O!OOOni", names, &buffer, &PyDict_Type, &codes, &PyTuple_Type,
                                     &plain, &strided, &kind_none, &shared_marker, &cache_limit, &first_integer))
        return -1;
    if (PyTuple_GET_SIZE(plain) != 2) {
        PyErr_SetString(PyExc_TypeError, "Describer: plain must be two classes");
        return -1;
    }
    describer_clear(self);
    self->kinds = get(buffer, "kinds");
    self->numels = get(buffer, "numels");
    self->layouts = get(buffer, "layouts");
    self->cache = get(buffer, "_cache");
    self->addresses = get(buffer, "_addresses");
    if (self->kinds == NULL || self->numels == NULL || self->layouts == NULL || self->cache == NULL ||
        self->addresses == NULL || get_pair(buffer, "host_slots", self->host_slots) < 0 ||
        get_pair(buffer, "host_values", self->host_values) < 0)
        return -1;
    if (!PyList_CheckExact(self->kinds) || !PyList_CheckExact(self->numels) || !PyList_CheckExact(self->layouts) ||
        !PyDict_CheckExact(self->cache) || !PyDict_CheckExact(self->addresses) ||
        !PyList_CheckExact(self->host_slots[0]) || !PyList_CheckExact(self->host_slots[1]) ||
        !PyByteArray_CheckExact(self->host_values[0]) || !PyByteArray_CheckExact(self->host_values[1])) {
        PyErr_SetString(PyExc_TypeError, "Describer: the StatBuffer's bookkeeping is not of the expected types");
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        self->plain[i] = PyTuple_GET_ITEM(plain, i);
        Py_INCREF(self->plain[i]);
    }
    self->codes = Py_NewRef(codes);
    self->strided = Py_NewRef(strided);
    self->kind_none = Py_NewRef(kind_none);
    self->shared_marker = Py_NewRef(shared_marker);
    self->cache_limit = cache_limit;
    self->first_integer = first_integer;
    return 0;
}

/* 1 when `t`'s attribute `name` is true, 0 when false, -1 on error */
static int attribute_true(PyObject *t, PyObject *name) {
    PyObject *value = PyObject_GetAttr(t, name);
    if (value == NULL)
        return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

/* 1 when `t.method()` is true, 0 when false, -1 on error */
static int call_true(PyObject *t, PyObject *method) {
    PyObject *value = PyObject_CallMethodNoArgs(t, method);
    if (value == NULL)
        return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

/* stats._dense: the elements lie back to back in some order of the dimensions (1, 0, or -1 on error) */
static int dense(PyObject *t, PyObject *shape) {
    PyObject *stride = PyObject_CallMethodNoArgs(t, s_stride);
    if (stride == NULL)
        return -1;
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    if (!PyTuple_Check(stride) || PyTuple_GET_SIZE(stride) != ndim || ndim > MAX_DIMS) {
        Py_DECREF(stride);
        return 0;
    }
    long long strides[MAX_DIMS], sizes[MAX_DIMS];
    int n = 0;
    for (Py_ssize_t d = 0; d < ndim; d++) {
        long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
        long long step = PyLong_AsLongLong(PyTuple_GET_ITEM(stride, d));
        if (PyErr_Occurred()) {
            Py_DECREF(stride);
            return -1;
        }
        if (size == 1)
            continue;
        int at = n++; /* insertion sort by (stride, size) */
        while (at > 0 && (strides[at - 1] > step || (strides[at - 1] == step && sizes[at - 1] > size))) {
            strides[at] = strides[at - 1];
            sizes[at] = sizes[at - 1];
            at--;
        }
        strides[at] = step;
        sizes[at] = size;
    }
    Py_DECREF(stride);
    long long expected = 1;
    for (int i = 0; i < n; i++) {
        if (strides[i] != expected)
            return 0;
        expected *= sizes[i];
    }
    return 1;
}

/* stats._dead: a cache entry that is missing or whose tensor was freed */
static int dead(PyObject *entry) {
    return entry == NULL || PyWeakref_GET_OBJECT(PyTuple_GET_ITEM(entry, 0)) == Py_None;
}

/* StatBuffer._remember */
static int remember(Describer *self, PyObject *t, PyObject *key, PyObject *version, PyObject *slot,
                    PyObject *address) {
    if (PyDict_GET_SIZE(self->cache) > self->cache_limit) {
        PyDict_Clear(self->cache);
        PyDict_Clear(self->addresses);
    }
    PyObject *reference = PyWeakref_NewRef(t, NULL);
    if (reference == NULL)
        return -1;
    PyObject *entry = PyTuple_Pack(3, reference, version, slot);
    Py_DECREF(reference);
    if (entry == NULL || PyDict_SetItem(self->cache, key, entry) < 0) {
        Py_XDECREF(entry);
        return -1;
    }
    Py_DECREF(entry);
    PyObject *known = PyDict_GetItemWithError(self->addresses, address);
    if (known == NULL && PyErr_Occurred())
        return -1;
    PyObject *owner = key;
    if (known != NULL) {
        int same = PyObject_RichCompareBool(known, key, Py_EQ);
        int marker = PyObject_RichCompareBool(known, self->shared_marker, Py_EQ);
        if (same < 0 || marker < 0)
            return -1;
        if (!same && !marker) {
            PyObject *other = PyDict_GetItemWithError(self->cache, known);
            if (other == NULL && PyErr_Occurred())
                return -1;
            owner = dead(other) ? key : self->shared_marker;
        } else if (marker) {
            owner = self->shared_marker;
        }
    }
    return PyDict_SetItem(self->addresses, address, owner);
}

/* slot(t, shared) -> int */
static PyObject *describer_slot(Describer *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "slot(t, shared) takes two arguments");
        return NULL;
    }
    PyObject *t = args[0], *result = NULL, *key = NULL, *dtype = NULL, *shape = NULL, *layout = NULL;
    PyObject *numel = NULL, *slot = NULL, *address = NULL, *version = NULL;
    int shared = PyObject_IsTrue(args[1]);
    if (shared < 0)
        return NULL;
    key = PyLong_FromVoidPtr(t); /* id(t) */
    if (key == NULL)
        return NULL;
    if (shared) { /* the same object in the same state: the same slot */
        PyObject *known = PyDict_GetItemWithError(self->cache, key);
        if (known == NULL && PyErr_Occurred())
            goto done;
        if (known != NULL && PyWeakref_GET_OBJECT(PyTuple_GET_ITEM(known, 0)) == t) {
            Py_INCREF(known);
            version = PyObject_GetAttr(t, s_version);
            int same = version == NULL ? -1 : PyObject_RichCompareBool(PyTuple_GET_ITEM(known, 1), version, Py_EQ);
            if (same > 0)
                result = Py_NewRef(PyTuple_GET_ITEM(known, 2));
            Py_DECREF(known);
            if (same != 0)
                goto done;
            Py_CLEAR(version);
        }
    }
    dtype = PyObject_GetAttr(t, s_dtype);
    if (dtype == NULL)
        goto done;
    PyObject *code_kind = PyDict_GetItemWithError(self->codes, dtype);
    if (code_kind == NULL) {
        if (!PyErr_Occurred())
            result = PyLong_FromLong(-1);
        goto done;
    }
    PyObject *type = (PyObject *)Py_TYPE(t);
    int fits = type == self->plain[0] || type == self->plain[1];
    if (fits)
        fits = attribute_true(t, s_is_cpu);
    if (fits > 0) {
        layout = PyObject_GetAttr(t, s_layout);
        fits = layout == NULL ? -1 : layout == self->strided;
    }
    if (fits > 0) {
        int negative = call_true(t, s_is_neg);
        fits = negative < 0 ? -1 : !negative;
    }
    if (fits > 0) {
        shape = PyObject_GetAttr(t, s_shape);
        fits = shape == NULL ? -1 : PyTuple_Check(shape);
    }
    if (fits > 0) {
        fits = call_true(t, s_is_contiguous);
        if (fits == 0)
            fits = dense(t, shape);
    }
    if (fits <= 0) {
        if (fits == 0)
            result = PyLong_FromLong(-1);
        goto done;
    }
    /* StatBuffer._open_slot */
    long long count = 1; /* numel(): the product of the shape, without a method call */
    for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(shape); d++) {
        long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
        if (size == -1 && PyErr_Occurred())
            goto done;
        count *= size;
    }
    numel = PyLong_FromLongLong(count);
    if (numel == NULL)
        goto done;
    slot = PyLong_FromSsize_t(PyList_GET_SIZE(self->kinds));
    PyObject *plain_shape = PySequence_Tuple(shape);
    PyObject *layout_key = plain_shape == NULL ? NULL : PyTuple_Pack(2, dtype, plain_shape);
    Py_XDECREF(plain_shape);
    if (slot == NULL || layout_key == NULL || PyList_Append(self->kinds, PyTuple_GET_ITEM(code_kind, 1)) < 0 ||
        PyList_Append(self->numels, numel) < 0 || PyList_Append(self->layouts, layout_key) < 0) {
        Py_XDECREF(layout_key);
        goto done;
    }
    Py_DECREF(layout_key);
    if (count == 0) {
        result = Py_NewRef(slot);
        goto done;
    }
    address = PyObject_CallMethodNoArgs(t, s_data_ptr);
    if (address == NULL) { /* no storage of its own (inside a torch.func transform): no statistics */
        if (PyErr_ExceptionMatches(PyExc_RuntimeError)) {
            PyErr_Clear();
            if (PyList_SetItem(self->kinds, PyList_GET_SIZE(self->kinds) - 1, Py_NewRef(self->kind_none)) == 0)
                result = Py_NewRef(slot);
        }
        goto done;
    }
    void *data = PyLong_AsVoidPtr(address);
    if (data == NULL && PyErr_Occurred())
        goto done;
    version = PyObject_GetAttr(t, s_version);
    if (version == NULL) { /* an inference tensor has no version counter: its states share no slot */
        if (!PyErr_ExceptionMatches(PyExc_RuntimeError))
            goto done;
        PyErr_Clear();
    } else if (remember(self, t, key, version, slot, address) < 0) {
        goto done;
    }
    int code = (int)PyLong_AsLong(PyTuple_GET_ITEM(code_kind, 0));
    if (code == -1 && PyErr_Occurred())
        goto done;
    int integer = code >= self->first_integer;
    if (append_statistics(self->host_values[integer], data, count, code) < 0 ||
        PyList_Append(self->host_slots[integer], slot) < 0)
        goto done;
    result = Py_NewRef(slot);
done:
    Py_XDECREF(key);
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(layout);
    Py_XDECREF(numel);
    Py_XDECREF(slot);
    Py_XDECREF(address);
    Py_XDECREF(version);
    return result;
}

static PyMethodDef describer_methods[] = {
    {"slot", (PyCFunction)(void (*)(void))describer_slot, METH_FASTCALL,
     "slot(t, shared) -> the slot of a state recorded before (when shared) or of a dense CPU tensor described "
     "now; -1 for a tensor to keep pending"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DescriberType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "msprobe_runtime.pytorch.capture._describe.Describer",
    .tp_basicsize = sizeof(Describer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Describer(buffer, codes, plain, strided, kind_none, shared_marker, cache_limit, first_integer): "
              "StatBuffer.slot's hot path over `buffer`'s bookkeeping",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)describer_init,
    .tp_dealloc = (destructor)describer_dealloc,
    .tp_traverse = (traverseproc)describer_traverse,
    .tp_clear = (inquiry)describer_clear,
    .tp_methods = describer_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_describe",
                                    "StatBuffer.slot's hot path: tensor states recorded in a step.", -1, NULL};

PyMODINIT_FUNC PyInit__describe(void) {
    PyObject *hoststats = PyImport_ImportModule("msprobe_runtime.core._hoststats"); /* before PyCapsule_Import */
    if (hoststats == NULL)                                                          /* walks its attributes */
        return NULL;
    Py_DECREF(hoststats);
    append_statistics = (AppendStatistics)PyCapsule_Import("msprobe_runtime.core._hoststats.append_statistics", 0);
    if (append_statistics == NULL)
        return NULL;
    static const char *const attributes[] = {"_version", "dtype", "is_cpu", "layout", "is_neg",
                                             "is_contiguous", "shape", "stride", "data_ptr"};
    PyObject **interned[] = {&s_version, &s_dtype, &s_is_cpu, &s_layout, &s_is_neg,
                             &s_is_contiguous, &s_shape, &s_stride, &s_data_ptr};
    for (size_t i = 0; i < sizeof attributes / sizeof *attributes; i++)
        if ((*interned[i] = PyUnicode_InternFromString(attributes[i])) == NULL)
            return NULL;
    if (PyType_Ready(&DescriberType) < 0)
        return NULL;
    PyObject *self = PyModule_Create(&module);
    if (self == NULL)
        return NULL;
    if (PyModule_AddObjectRef(self, "Describer", (PyObject *)&DescriberType) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return self;
}
