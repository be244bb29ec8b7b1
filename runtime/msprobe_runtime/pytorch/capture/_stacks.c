/* capture.stacks.capture_stack in C: every recorded call takes its stack (hundreds a step at L1), and in
 * Python the walk's frame reads and dict lookups cost more than the rest of a small call's record.
 *
 * Stacks(own_dir, codes, chains, links, last_stack, places).capture(frame) follows stacks.walk_stack step for
 * step, on the module's own dicts and lists (stacks._codes, _chains, _links, _last_stack, _places), so that
 * stack_lines() and release() read and clear what it writes. It keeps the frame of the last capture
 * itself (stacks._Last in Python); forget() drops it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#define RESUMABLE (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR) /* may resume under another caller */

typedef struct {
    PyObject_HEAD
    PyObject *own_dir;                 /* str: frames whose file starts with it are skipped */
    PyObject *codes, *chains, *places; /* dicts: id(code) -> code; link -> number; id(frame) -> place in last_stack */
    PyObject *links;                   /* list: number -> (id(code), instruction, number below) */
    PyObject *last_stack;              /* list: the last stack walked, from the bottom: (frame, instruction,
                                          number) per frame, None for a generator's */
    PyObject *last_frame;              /* the frame of the last capture, or NULL */
    PyObject *last_below;              /* the number of the chain below it */
} Stacks;

static int stacks_traverse(Stacks *self, visitproc visit, void *arg) {
    Py_VISIT(self->own_dir);
    Py_VISIT(self->codes);
    Py_VISIT(self->chains);
    Py_VISIT(self->places);
    Py_VISIT(self->last_stack);
    Py_VISIT(self->links);
    Py_VISIT(self->last_frame);
    Py_VISIT(self->last_below);
    return 0;
}

static int stacks_clear(Stacks *self) {
    Py_CLEAR(self->own_dir);
    Py_CLEAR(self->codes);
    Py_CLEAR(self->chains);
    Py_CLEAR(self->places);
    Py_CLEAR(self->last_stack);
    Py_CLEAR(self->links);
    Py_CLEAR(self->last_frame);
    Py_CLEAR(self->last_below);
    return 0;
}

static void stacks_dealloc(Stacks *self) {
    PyObject_GC_UnTrack(self);
    stacks_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int stacks_init(Stacks *self, PyObject *args, PyObject *kwargs) {
    PyObject *own_dir, *codes, *chains, *links, *last_stack, *places;
    static char *names[] = {"own_dir", "codes", "chains", "links", "last_stack", "places", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UO!O!O!O!O!", names, &own_dir, &PyDict_Type, &codes, &PyDict_Type,
                                     &chains, &PyList_Type, &links, &PyList_Type, &last_stack, &PyDict_Type, &places))
        return -1;
    stacks_clear(self);
    self->own_dir = Py_NewRef(own_dir);
    self->codes = Py_NewRef(codes);
    self->chains = Py_NewRef(chains);
    self->links = Py_NewRef(links);
    self->last_stack = Py_NewRef(last_stack);
    self->places = Py_NewRef(places);
    return 0;
}

/* the instruction a frame is at, as Python's frame.f_lasti */
static PyObject *instruction_of(PyFrameObject *frame) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyLong_FromLong(PyFrame_GetLasti(frame));
#else
    return PyObject_GetAttrString((PyObject *)frame, "f_lasti");
#endif
}

/* stacks._link: the number (new reference) of the chain (code, instruction) over the chain `below` */
static PyObject *chain_number(Stacks *self, PyCodeObject *code, PyObject *instruction, PyObject *below) {
    PyObject *code_id = PyLong_FromVoidPtr(code);
    if (code_id == NULL)
        return NULL;
    PyObject *key = PyTuple_Pack(3, code_id, instruction, below);
    PyObject *number = NULL;
    if (key == NULL)
        goto done;
    number = PyDict_GetItemWithError(self->chains, key);
    if (number != NULL) {
        Py_INCREF(number);
        goto done;
    }
    if (PyErr_Occurred() || PyDict_SetDefault(self->codes, code_id, (PyObject *)code) == NULL)
        goto done;
    number = PyLong_FromSsize_t(PyList_GET_SIZE(self->links));
    if (number == NULL)
        goto done;
    if (PyDict_SetItem(self->chains, key, number) < 0 || PyList_Append(self->links, key) < 0)
        Py_CLEAR(number);
done:
    Py_DECREF(code_id);
    Py_XDECREF(key);
    return number;
}

/* frames walked, innermost first (strong references) */
typedef struct {
    PyFrameObject **items;
    Py_ssize_t size, capacity;
} Walked;

static int walked_push(Walked *walked, PyFrameObject *frame) {
    if (walked->size == walked->capacity) {
        Py_ssize_t capacity = walked->capacity ? 2 * walked->capacity : 32;
        PyFrameObject **items = PyMem_Realloc(walked->items, (size_t)capacity * sizeof *items);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        walked->items = items;
        walked->capacity = capacity;
    }
    walked->items[walked->size++] = frame;
    return 0;
}

static void walked_free(Walked *walked) {
    for (Py_ssize_t i = 0; i < walked->size; i++)
        Py_DECREF(walked->items[i]);
    PyMem_Free(walked->items);
}

/* the frame's back frame (new reference, NULL at the bottom), dropping the reference to `frame` */
static PyFrameObject *back_of(PyFrameObject *frame) {
    PyFrameObject *back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    return back;
}

/* whether the frame runs code from a file under own_dir: 1, 0, or -1 with an exception set */
static int is_own(Stacks *self, PyFrameObject *frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);
    Py_ssize_t own = PyUnicode_Tailmatch(code->co_filename, self->own_dir, 0, PY_SSIZE_T_MAX, -1);
    Py_DECREF(code);
    return (int)own;
}

/* whether a frame's code may resume under another caller (generators): such frames are never remembered */
static int resumable(PyFrameObject *frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);
    int flags = code->co_flags;
    Py_DECREF(code);
    return (flags & RESUMABLE) != 0;
}

/* the number (new reference) of the chain (frame's code, its instruction) over `below` */
static PyObject *frame_number(Stacks *self, PyFrameObject *frame, PyObject *below, PyObject **instruction_out) {
    PyObject *instruction = instruction_of(frame);
    if (instruction == NULL)
        return NULL;
    PyCodeObject *code = PyFrame_GetCode(frame);
    PyObject *number = chain_number(self, code, instruction, below);
    Py_DECREF(code);
    if (instruction_out != NULL && number != NULL)
        *instruction_out = instruction;
    else
        Py_DECREF(instruction);
    return number;
}

/* the number (borrowed) of `frame` in last_stack when it is still at the instruction it was at, and its
 * place there; else NULL (with an exception set on error) */
static PyObject *remembered(Stacks *self, PyFrameObject *frame, Py_ssize_t *place) {
    PyObject *frame_id = PyLong_FromVoidPtr(frame);
    if (frame_id == NULL)
        return NULL;
    PyObject *found = PyDict_GetItemWithError(self->places, frame_id);
    Py_DECREF(frame_id);
    if (found == NULL)
        return NULL;
    *place = PyLong_AsSsize_t(found);
    if (*place < 0 || *place >= PyList_GET_SIZE(self->last_stack)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "capture: a remembered frame out of place");
        return NULL;
    }
    PyObject *seen = PyList_GET_ITEM(self->last_stack, *place);
    if (!PyTuple_Check(seen) || PyTuple_GET_SIZE(seen) != 3 || PyTuple_GET_ITEM(seen, 0) != (PyObject *)frame)
        return NULL;
    PyObject *instruction = instruction_of(frame);
    if (instruction == NULL)
        return NULL;
    int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(seen, 1), instruction, Py_EQ);
    Py_DECREF(instruction);
    return same == 1 ? PyTuple_GET_ITEM(seen, 2) : NULL;
}

/* drop the frames remembered above `place` (they have returned); 0, or -1 with an exception set */
static int drop_above(Stacks *self, Py_ssize_t place) {
    Py_ssize_t size = PyList_GET_SIZE(self->last_stack);
    for (Py_ssize_t i = place + 1; i < size; i++) {
        PyObject *returned = PyList_GET_ITEM(self->last_stack, i);
        if (returned == Py_None)
            continue;
        PyObject *frame_id = PyLong_FromVoidPtr(PyTuple_GET_ITEM(returned, 0));
        int failed = frame_id == NULL || PyDict_DelItem(self->places, frame_id) < 0;
        Py_XDECREF(frame_id);
        if (failed)
            return -1;
    }
    return PyList_SetSlice(self->last_stack, place + 1, size, NULL);
}

/* remember `frame` at the top of last_stack (None for a generator's frame); 0, or -1 with an exception set */
static int remember(Stacks *self, PyFrameObject *frame, PyObject *instruction, PyObject *number) {
    if (resumable(frame))
        return PyList_Append(self->last_stack, Py_None);
    PyObject *frame_id = PyLong_FromVoidPtr(frame);
    PyObject *place = PyLong_FromSsize_t(PyList_GET_SIZE(self->last_stack));
    PyObject *entry = PyTuple_Pack(3, (PyObject *)frame, instruction, number);
    int failed = frame_id == NULL || place == NULL || entry == NULL || PyDict_SetItem(self->places, frame_id, place) < 0 ||
                 PyList_Append(self->last_stack, entry) < 0;
    Py_XDECREF(frame_id);
    Py_XDECREF(place);
    Py_XDECREF(entry);
    return failed ? -1 : 0;
}

static PyObject *stacks_capture(Stacks *self, PyObject *frame_arg) {
    if (frame_arg == Py_None)
        return PyLong_FromLong(-1);
    if (!PyFrame_Check(frame_arg)) {
        PyErr_SetString(PyExc_TypeError, "capture: a frame or None");
        return NULL;
    }
    PyFrameObject *frame = (PyFrameObject *)Py_NewRef(frame_arg);
    for (;;) { /* skip msprobe_runtime's own frames */
        int own = is_own(self, frame);
        if (own < 0) {
            Py_DECREF(frame);
            return NULL;
        }
        if (!own)
            break;
        if ((frame = back_of(frame)) == NULL)
            return PyLong_FromLong(-1);
    }
    PyObject *number = NULL;
    if ((PyObject *)frame == self->last_frame) { /* the same call, still running: frames below it are unchanged */
        number = frame_number(self, frame, self->last_below, NULL);
        Py_DECREF(frame);
        return number;
    }
    Walked walked = {NULL, 0, 0};
    Py_ssize_t place = -1; /* of the remembered frame the walk stops at */
    PyFrameObject *cursor = (PyFrameObject *)Py_NewRef(frame);
    while (cursor != NULL) {
        PyObject *seen = remembered(self, cursor, &place);
        if (seen != NULL) {
            number = Py_NewRef(seen);
            break;
        }
        place = -1;
        if (PyErr_Occurred() || walked_push(&walked, cursor) < 0)
            goto error;
        cursor = PyFrame_GetBack(cursor); /* walked holds the reference to the frame before */
    }
    Py_CLEAR(cursor);
    if (drop_above(self, place) < 0 || (number == NULL && (number = PyLong_FromLong(-1)) == NULL))
        goto error;
    for (Py_ssize_t i = walked.size - 1; i >= 0; i--) {
        PyObject *instruction = NULL;
        PyObject *above = frame_number(self, walked.items[i], number, &instruction);
        if (above == NULL)
            goto error;
        Py_SETREF(number, above);
        int failed = remember(self, walked.items[i], instruction, number) < 0;
        Py_DECREF(instruction);
        if (failed)
            goto error;
    }
    if (!resumable(frame)) {
        Py_ssize_t index = PyLong_AsSsize_t(number);
        if (index < 0 || index >= PyList_GET_SIZE(self->links)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "capture: a stack number out of range");
            goto error;
        }
        Py_XSETREF(self->last_frame, Py_NewRef((PyObject *)frame));
        Py_XSETREF(self->last_below, Py_NewRef(PyTuple_GET_ITEM(PyList_GET_ITEM(self->links, index), 2)));
    }
    walked_free(&walked);
    Py_DECREF(frame);
    return number;
error:
    Py_XDECREF(cursor);
    Py_XDECREF(number);
    walked_free(&walked);
    Py_DECREF(frame);
    return NULL;
}

static PyObject *stacks_forget(Stacks *self, PyObject *Py_UNUSED(ignored)) {
    Py_CLEAR(self->last_frame);
    Py_CLEAR(self->last_below);
    Py_RETURN_NONE;
}

static PyMethodDef stacks_methods[] = {
    {"capture", (PyCFunction)stacks_capture, METH_O,
     "capture(frame) -> the number of the stack at `frame`, skipping own_dir's frames (-1: no frame)"},
    {"forget", (PyCFunction)stacks_forget, METH_NOARGS, "forget() -> None: drop the frame of the last capture"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StacksType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "msprobe_runtime.pytorch.capture._stacks.Stacks",
    .tp_basicsize = sizeof(Stacks),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Stacks(own_dir, codes, chains, links, last_stack, places): capture_stack over these caches",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)stacks_init,
    .tp_dealloc = (destructor)stacks_dealloc,
    .tp_traverse = (traverseproc)stacks_traverse,
    .tp_clear = (inquiry)stacks_clear,
    .tp_methods = stacks_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_stacks", "capture_stack's walk over the call stack.",
                                    -1, NULL};

PyMODINIT_FUNC PyInit__stacks(void) {
    if (PyType_Ready(&StacksType) < 0)
        return NULL;
    PyObject *self = PyModule_Create(&module);
    if (self == NULL)
        return NULL;
    if (PyModule_AddObjectRef(self, "Stacks", (PyObject *)&StacksType) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return self;
}
