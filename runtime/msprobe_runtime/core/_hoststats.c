/* Statistics of a tensor held in host memory, in one pass: max, min, sum and norm of contiguous float32,
 * float64 or bfloat16 data (max and min of integers and bools), appended to a bytearray. The PyTorch
 * runtime uses it for CPU tensors when they are recorded (capture.stats, through capture/_describe.c),
 * while their data is still in the cache; elsewhere the statistics come from the framework's own
 * reductions (and in the hash, md5 and tensor summary modes).
 *
 * The data is read once, in blocks: inside a block, LANES independent lanes keep max, min, sum and sum
 * of squares (so the compiler can use vector instructions without reordering any one lane's additions);
 * each block's sums are added into double totals. NaN follows the frameworks' reductions: any NaN makes
 * every statistic NaN (the lanes' comparisons skip NaN, the sum of squares does not, so it tells).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define LANES 32
#define BLOCK 2048 /* elements per block: a multiple of LANES */

enum { FLOAT32 = 0, FLOAT64 = 1, BFLOAT16 = 2, INT64 = 3, INT32 = 4, INT16 = 5, INT8 = 6, UINT8 = 7 };

static inline float load_float32(const void *data, int64_t i) { return ((const float *)data)[i]; }
static inline double load_float64(const void *data, int64_t i) { return ((const double *)data)[i]; }
static inline float load_bfloat16(const void *data, int64_t i) {
    uint32_t bits = (uint32_t)((const uint16_t *)data)[i] << 16;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* With GCC on x86-64 Linux the reductions are also compiled for AVX-512 and AVX2 (four and two times the
 * lanes of the SSE2 baseline), chosen at load time on CPUs that have them; 32 lanes keep four AVX-512
 * sums apart (an addition's latency), and a block of 2048 folds them into the totals a quarter as often
 * as 512 did (benchmarks/capture_statistics_speed.py). Without FMA: every clone gives the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VECTOR_CLONES
#endif

/* out[0..3] = max, min, sum, norm of `count` elements at `data`; T is the lanes' type */
#define DEFINE_REDUCE(NAME, T, LOAD)                                                                       \
    VECTOR_CLONES static void NAME(const void *data, int64_t count, double *out) {                       \
        T high[LANES], low[LANES];                                                                         \
        double total = 0, squares = 0;                                                                     \
        for (int l = 0; l < LANES; l++) {                                                                  \
            high[l] = -INFINITY;                                                                           \
            low[l] = INFINITY;                                                                             \
        }                                                                                                  \
        int64_t i = 0, whole = count - count % LANES;                                                      \
        while (i < whole) {                                                                                \
            T sum[LANES], square[LANES];                                                                   \
            for (int l = 0; l < LANES; l++)                                                                \
                sum[l] = square[l] = 0;                                                                    \
            int64_t stop = i + BLOCK < whole ? i + BLOCK : whole;                                          \
            for (; i < stop; i += LANES)                                                                   \
                for (int l = 0; l < LANES; l++) {                                                          \
                    T v = LOAD(data, i + l);                                                               \
                    high[l] = v > high[l] ? v : high[l];                                                   \
                    low[l] = v < low[l] ? v : low[l];                                                      \
                    sum[l] += v;                                                                           \
                    square[l] += v * v;                                                                    \
                }                                                                                          \
            for (int l = 0; l < LANES; l++) {                                                              \
                total += sum[l];                                                                           \
                squares += square[l];                                                                      \
            }                                                                                              \
        }                                                                                                  \
        for (; i < count; i++) {                                                                           \
            T v = LOAD(data, i);                                                                           \
            high[0] = v > high[0] ? v : high[0];                                                           \
            low[0] = v < low[0] ? v : low[0];                                                              \
            T square = v * v; /* in the lanes' type, as in the blocks */                                   \
            total += v;                                                                                    \
            squares += square;                                                                             \
        }                                                                                                  \
        for (int l = 1; l < LANES; l++) {                                                                  \
            high[0] = high[l] > high[0] ? high[l] : high[0];                                               \
            low[0] = low[l] < low[0] ? low[l] : low[0];                                                    \
        }                                                                                                  \
        int nan = isnan(squares);                                                                          \
        out[0] = nan ? NAN : high[0];                                                                      \
        out[1] = nan ? NAN : low[0];                                                                       \
        out[2] = total;                                                                                    \
        out[3] = sqrt(squares);                                                                            \
    }

DEFINE_REDUCE(reduce_float32, float, load_float32)
DEFINE_REDUCE(reduce_float64, double, load_float64)
DEFINE_REDUCE(reduce_bfloat16, float, load_bfloat16)

/* integers (and bool, as uint8): out[0..1] = max and min as int64 (exact), out[2..3] unused (zero) */
#define DEFINE_RANGE(NAME, T)                                                                              \
    static void NAME(const void *data, int64_t count, double *out) {                                     \
        const T *x = (const T *)data;                                                                      \
        T high[LANES], low[LANES];                                                                         \
        for (int l = 0; l < LANES; l++)                                                                    \
            high[l] = low[l] = x[0];                                                                       \
        int64_t i = 0, whole = count - count % LANES;                                                      \
        for (; i < whole; i += LANES)                                                                      \
            for (int l = 0; l < LANES; l++) {                                                              \
                T v = x[i + l];                                                                            \
                high[l] = v > high[l] ? v : high[l];                                                       \
                low[l] = v < low[l] ? v : low[l];                                                          \
            }                                                                                              \
        for (; i < count; i++) {                                                                           \
            high[0] = x[i] > high[0] ? x[i] : high[0];                                                     \
            low[0] = x[i] < low[0] ? x[i] : low[0];                                                        \
        }                                                                                                  \
        for (int l = 1; l < LANES; l++) {                                                                  \
            high[0] = high[l] > high[0] ? high[l] : high[0];                                               \
            low[0] = low[l] < low[0] ? low[l] : low[0];                                                    \
        }                                                                                                  \
        int64_t range[4] = {high[0], low[0], 0, 0};                                                        \
        memcpy(out, range, sizeof range);                                                                  \
    }

DEFINE_RANGE(range_int64, int64_t)
DEFINE_RANGE(range_int32, int32_t)
DEFINE_RANGE(range_int16, int16_t)
DEFINE_RANGE(range_int8, int8_t)
DEFINE_RANGE(range_uint8, uint8_t)

typedef void (*Reducer)(const void *, int64_t, double *);
static const Reducer REDUCERS[] = {reduce_float32, reduce_float64, reduce_bfloat16, range_int64,
                                   range_int32,    range_int16,    range_int8,      range_uint8};

/* Append to the bytearray `values` four float64 numbers, max, min, sum and norm, of the `count` (> 0)
 * elements of contiguous host data at `data` (dtype 0 float32, 1 float64, 2 bfloat16); for integers (3
 * int64, 4 int32, 5 int16, 6 int8, 7 uint8 or bool) max and min as int64, then two zeros. The caller keeps
 * the data alive during the call. Other extensions call it through the capsule `append_statistics`
 * (capture's tensor describer, pytorch/capture/_describe.c). 0 on success, -1 with an exception set. */
static int append_statistics(PyObject *values, const void *data, int64_t count, int dtype) {
    if (count < 1 || dtype < 0 || dtype > UINT8) {
        PyErr_SetString(PyExc_ValueError, "append_statistics: no elements or unknown dtype");
        return -1;
    }
    Py_ssize_t size = PyByteArray_GET_SIZE(values);
    if (PyByteArray_Resize(values, size + 4 * (Py_ssize_t)sizeof(double)) < 0)
        return -1;
    double out[4];
    Reducer reduce = REDUCERS[dtype];
    if (count > BLOCK) {
        Py_BEGIN_ALLOW_THREADS
        reduce(data, count, out);
        Py_END_ALLOW_THREADS
    } else {
        reduce(data, count, out);
    }
    memcpy(PyByteArray_AS_STRING(values) + size, out, sizeof out);
    return 0;
}

/* how many of `count` elements fall in each interval cut by `bounds` (compared in the data's type, as a
 * framework compares a tensor with a Python number; NaN falls in the last), then how many are zero */
#define DEFINE_INTERVALS(NAME, T, LOAD)                                                                    \
    static void NAME(const void *data, int64_t count, const double *bounds, int nbounds, double *out) {   \
        T cut[nbounds > 0 ? nbounds : 1];                                                                  \
        int64_t counts[nbounds + 2];                                                                       \
        for (int b = 0; b < nbounds; b++)                                                                  \
            cut[b] = (T)bounds[b];                                                                         \
        memset(counts, 0, sizeof counts);                                                                  \
        for (int64_t i = 0; i < count; i++) {                                                              \
            T v = LOAD(data, i);                                                                           \
            int b = 0;                                                                                     \
            while (b < nbounds && !(v <= cut[b]))                                                          \
                b++;                                                                                       \
            counts[b]++;                                                                                   \
            counts[nbounds + 1] += v == 0;                                                                 \
        }                                                                                                  \
        for (int b = 0; b < nbounds + 2; b++)                                                              \
            out[b] = (double)counts[b];                                                                    \
    }

DEFINE_INTERVALS(intervals_float32, float, load_float32)
DEFINE_INTERVALS(intervals_float64, double, load_float64)
DEFINE_INTERVALS(intervals_bfloat16, float, load_bfloat16)

typedef void (*Counter)(const void *, int64_t, const double *, int, double *);
static const Counter COUNTERS[] = {intervals_float32, intervals_float64, intervals_bfloat16};
static const Py_ssize_t ITEM_SIZES[] = {4, 8, 2};

/* one row of `segments`: max, min, norm, then (with bounds) the interval counts and the zeros */
static void describe_segment(const char *data, int64_t count, int dtype, const double *bounds, int nbounds,
                             double *row) {
    if (count == 0) {
        row[0] = row[1] = NAN;
        row[2] = 0;
        if (nbounds >= 0)
            memset(row + 3, 0, (size_t)(nbounds + 2) * sizeof(double));
        return;
    }
    double out[4];
    REDUCERS[dtype](data, count, out);
    row[0] = out[0];
    row[1] = out[1];
    row[2] = out[3];
    if (nbounds >= 0)
        COUNTERS[dtype](data, count, bounds, nbounds, row + 3);
}

PyDoc_STRVAR(segments_doc,
             "segments(data, dtype, sizes, bounds=None)\n\n"
             "float64 rows, as bytes, describing consecutive runs of `sizes` elements of the contiguous\n"
             "buffer `data` (dtype 0 float32, 1 float64, 2 bfloat16): max, min and norm (NaN, NaN, 0 for an\n"
             "empty run); with `bounds` (a sequence of floats) then the count of elements in each interval\n"
             "they cut, (-inf, b0], (b0, b1], ..., (bn, inf) with NaN, and the count of zeros.");

static PyObject *segments(PyObject *self, PyObject *args) {
    Py_buffer view;
    int dtype;
    PyObject *sizes_arg, *bounds_arg = Py_None, *result = NULL;
    if (!PyArg_ParseTuple(args, "y*iO|O", &view, &dtype, &sizes_arg, &bounds_arg))
        return NULL;
    PyObject *sizes = PySequence_Fast(sizes_arg, "segments: sizes must be a sequence");
    PyObject *bounds = bounds_arg == Py_None ? NULL : PySequence_Fast(bounds_arg, "segments: bounds must be a sequence");
    int64_t *counts = NULL;
    double *cuts = NULL, *rows = NULL;
    if (sizes == NULL || (bounds_arg != Py_None && bounds == NULL))
        goto done;
    if (dtype < 0 || dtype > BFLOAT16) {
        PyErr_SetString(PyExc_ValueError, "segments: dtype must be 0 (float32), 1 (float64) or 2 (bfloat16)");
        goto done;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sizes);
    int nbounds = bounds == NULL ? -1 : (int)PySequence_Fast_GET_SIZE(bounds);
    Py_ssize_t width = 3 + (nbounds >= 0 ? nbounds + 2 : 0);
    counts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *counts);
    cuts = PyMem_Malloc((size_t)(nbounds > 0 ? nbounds : 1) * sizeof *cuts);
    rows = PyMem_Malloc((size_t)(n ? n * width : 1) * sizeof *rows);
    if (counts == NULL || cuts == NULL || rows == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t s = 0; s < n; s++) {
        counts[s] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(sizes, s));
        if (counts[s] == -1 && PyErr_Occurred())
            goto done;
        if (counts[s] < 0) {
            PyErr_SetString(PyExc_ValueError, "segments: negative size");
            goto done;
        }
        total += counts[s];
    }
    for (int b = 0; b < nbounds; b++) {
        cuts[b] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(bounds, b));
        if (cuts[b] == -1.0 && PyErr_Occurred())
            goto done;
    }
    if (total * ITEM_SIZES[dtype] > view.len) {
        PyErr_SetString(PyExc_ValueError, "segments: the sizes add up to more than the buffer holds");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    const char *data = view.buf;
    for (Py_ssize_t s = 0; s < n; s++) {
        describe_segment(data, counts[s], dtype, cuts, nbounds, rows + s * width);
        data += counts[s] * ITEM_SIZES[dtype];
    }
    Py_END_ALLOW_THREADS
    result = PyBytes_FromStringAndSize((const char *)rows, n * width * (Py_ssize_t)sizeof *rows);
done:
    PyMem_Free(counts);
    PyMem_Free(cuts);
    PyMem_Free(rows);
    Py_XDECREF(sizes);
    Py_XDECREF(bounds);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"segments", segments, METH_VARARGS, segments_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hoststats",
                                    "One-pass statistics of tensors in host memory.", -1, methods};

PyMODINIT_FUNC PyInit__hoststats(void) {
    PyObject *self = PyModule_Create(&module);
    if (self == NULL)
        return NULL;
    PyObject *capsule =
        PyCapsule_New((void *)append_statistics, "msprobe_runtime.core._hoststats.append_statistics", NULL);
    if (PyModule_AddObject(self, "append_statistics", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(self);
        return NULL;
    }
    return self;
}
