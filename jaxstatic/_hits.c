/* jaxstatic's cache hits in C: a hit with no Python frame of jaxstatic's (built by ``_c_hits``).

   Each type does what the generated Python code of the same call does (``_codegen``), for the calls it can take
   whole, and hands every other call to that code (``fallback``) unchanged, so the two can never disagree about
   what a call means: this is only a shorter road to the same program. A call that raises is handed, with its
   exception, to ``failed`` (Python), which names the parameter at fault and counts the failure as the generated
   code does.

   - ``LaneCall``, the exact-key lane's hit (``_lane``): the values in the lane's canonical order (positional
     parameters by position, keyword-only ones by name, Static defaults left out filled in), each static value's
     type checked (``_freeze.LANE``, or a function or class the lane keeps), the call counted, and JAX's program,
     whose static arguments are ours, called.
   - ``KeyCall``, the general path's hit of one call shape (``_core``; positional values, then keywords by name,
     one hit per shape met, each trying the next when a call is not of its shape): the flat key (``_codegen``) for
     atomic values, floats other than zeros and NaN, containers remembered by identity (``_memo``) that still
     hold the same objects, and dicts rebuilt from the same objects as one remembered by its contents; looked up
     in the function's cache; the call counted, the cache's order of use kept,
     the program called with the dynamic values.
   - ``Base``, the base class of jaxstatic's functions, whose instances carry a call slot of their own that
     ``attach`` points at their hit: the caller's arguments reach the hit as they are, with no tuple, dict or
     frame in between.
   - ``Counter``, a function's count of calls: a hit adds to it without making an int.
   - ``Recorder``, a donating program (``_donate``): JAX's program called, then where it donated noted, with no
     Python frame.

   Why C: Python calls an object whose class defines ``__call__`` in Python through its argument-tuple protocol
   and runs a new frame; measured on a 2-core machine, a lane hit's frame cost 5-10% of a 6 us ``jax.jit`` hit,
   and a same-object 10-entry dict config's identity check and key ~1.5 us more. Building this is optional:
   without a compiler jaxstatic runs the generated code for every call (``benchmarks/dispatch.py`` measures
   both). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>  /* T_OBJECT, T_PYSSIZET: still there on 3.12+ */
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>  /* f_lasti, read by a Recorder before 3.11's PyFrame_GetLasti */
#endif

/* ---- Counter: a function's count of calls --------------------------------------------------------------------- */

/* What ``itertools.count()`` is to the generated code (``next()`` gives the count as an int; it reads as
   ``count(N)``), to which a hit in C adds one without making an int (measured: making and freeing that int was
   1.5-2% of a ``jax.jit`` hit). Exact under the GIL, as ``itertools.count`` is. */

typedef struct {
    PyObject_HEAD
    Py_ssize_t next;
} Counter;

static PyObject *
counter_iternext(Counter *self)
{
    return PyLong_FromSsize_t(self->next++);
}

static PyObject *
counter_repr(Counter *self)
{
    return PyUnicode_FromFormat("count(%zd)", self->next);
}

static void
counter_dealloc(Counter *self)
{
    PyTypeObject *type = Py_TYPE(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMemberDef counter_members[] = {
    {"value", T_PYSSIZET, offsetof(Counter, next), READONLY, "The number counted so far."},
    {NULL},
};

static PyType_Slot counter_slots[] = {
    {Py_tp_doc, "Counter(): counts from 0, as itertools.count(); a hit in C adds to it directly."},
    {Py_tp_iter, PyObject_SelfIter},
    {Py_tp_iternext, counter_iternext},
    {Py_tp_repr, counter_repr},
    {Py_tp_dealloc, counter_dealloc},
    {Py_tp_members, counter_members},
    {0, NULL},
};

static PyType_Spec counter_spec = {
    "jaxstatic._hits.Counter",
    sizeof(Counter),
    0,
    Py_TPFLAGS_DEFAULT,
    counter_slots,
};

/* A hit is counted: on a Counter in place, on any other iterator by next(). Returns 0, or -1 with an exception. */
static int
count_hit(PyObject *calls)
{
    iternextfunc next = Py_TYPE(calls)->tp_iternext;
    if (next == (iternextfunc)counter_iternext) {
        ((Counter *)calls)->next++;
        return 0;
    }
    PyObject *count = next(calls);
    if (count == NULL) {
        return -1;
    }
    Py_DECREF(count);
    return 0;
}

#define LANE_MAX_PARAMS 64  /* a longer signature: every call is the fallback's */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;  /* as the class's __call__: the function first (hit_method_call) */
    vectorcallfunc call;        /* the call's own arguments alone (lane_vectorcall): what Base's slot calls */
    PyObject *fallback;  /* the generated __call__, bound to the jaxstatic function: every other call */
    PyObject *program;   /* jax.jit of the traced body, static_argnums = the static parameters */
    PyObject *failed;    /* failed(exception, positional args, keyword-only args): raises what the user sees */
    PyObject *allowed;   /* frozenset of the exact types (_freeze.LANE) */
    PyObject *kept;      /* dict id -> module-level function or class the lane takes */
    PyObject *names;     /* tuple: the parameters' names, positional ones then keyword-only ones, as declared */
    PyObject *kwonly;    /* tuple of the keyword-only names (JAX is given those by name), or NULL when none */
    PyObject *calls;     /* itertools.count of the function's calls (TraceStats.calls) */
    PyObject *statics;   /* tuple of the static parameters' positions (ints), for repr */
    PyObject *defaults;  /* tuple, one per parameter: its Static default, or `missing` (no default to pass) */
    PyObject *missing;
    Py_ssize_t nparams;
    Py_ssize_t npositional;
    Py_ssize_t npositional_only;
    Py_ssize_t nstatic;
    Py_ssize_t *static_index;
    PyTypeObject *common[4];  /* those of int, str, bool and NoneType that ``allowed`` holds: checked first */
    int ncommon;
} LaneCall;

/* Whether a static value is one the lane takes without asking Python: an exact type, or a kept object. */
static int
lane_admits(LaneCall *self, PyObject *value)
{
    PyTypeObject *type = Py_TYPE(value);
    for (int i = 0; i < self->ncommon; i++) {  /* the commonest static types, by pointer: no hash, no lookup */
        if (type == self->common[i]) {
            return 1;
        }
    }
    Py_ssize_t nkept = PyDict_GET_SIZE(self->kept);
    if (nkept > 0 && nkept <= 8) {  /* a few kept functions: compared by identity, no id() to allocate */
        Py_ssize_t pos = 0;
        PyObject *id, *held;
        while (PyDict_Next(self->kept, &pos, &id, &held)) {
            if (held == value) {
                return 1;
            }
        }
    }
    int found = PySet_Contains(self->allowed, (PyObject *)type);
    if (found != 0 || nkept <= 8) {
        return found;
    }
    PyObject *id = PyLong_FromVoidPtr(value);
    if (id == NULL) {
        return -1;
    }
    PyObject *held = PyDict_GetItemWithError(self->kept, id);  /* borrowed */
    Py_DECREF(id);
    if (held == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    return held == value;
}

/* Whether two parameter names are the same string (pointers first: both are usually the same interned string).
   Returns 1, 0, or -1 with an exception set. */
static int
lane_same_name(PyObject *given, PyObject *name)
{
    if (given == name) {
        return 1;
    }
    int order = PyUnicode_Compare(given, name);
    if (order == -1 && PyErr_Occurred()) {
        return -1;
    }
    return order == 0;
}

/* The call rebuilt in the lane's canonical order into ``full`` (every positional parameter, then every keyword-only
   one): the values given, and for each parameter left out its Static default. Returns 1, 0 when the call is not one
   the lane's hit takes (a name out of order or unknown, a positional-only parameter by name, a dynamic parameter
   left out, too many arguments: the fallback gives each its meaning or its error), or -1 with an exception set. */
static int
lane_arrange(LaneCall *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **full)
{
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs > self->npositional || self->nparams > LANE_MAX_PARAMS) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        full[i] = args[i];
    }
    Py_ssize_t j = 0;  /* the next keyword given */
    for (Py_ssize_t i = nargs; i < self->nparams; i++) {
        if (j < nkw) {
            int same = lane_same_name(PyTuple_GET_ITEM(kwnames, j), PyTuple_GET_ITEM(self->names, i));
            if (same < 0) {
                return -1;
            }
            if (same) {
                if (i < self->npositional_only) {
                    return 0;
                }
                full[i] = args[nargs + j];
                j++;
                continue;
            }
        }
        full[i] = PyTuple_GET_ITEM(self->defaults, i);
        if (full[i] == self->missing) {
            return 0;
        }
    }
    return j == nkw;
}

/* A call that raised: hand the exception to ``failed(exception, positional, keyword_only)`` (Python), which raises
   what the user sees; ``values[:npositional]`` are the call's positional values, ``values[npositional:nvalues]``
   those of ``names`` by keyword. Always returns NULL with an exception set. */
static PyObject *
hand_failure(PyObject *failed, PyObject *const *values, Py_ssize_t npositional, PyObject *names, Py_ssize_t nvalues)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != NULL) {
        PyException_SetTraceback(value, traceback);
    }
    PyObject *positional = PyTuple_New(npositional);
    PyObject *keywords = PyDict_New();
    PyObject *result = NULL;
    if (positional == NULL || keywords == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < npositional; i++) {
        PyTuple_SET_ITEM(positional, i, Py_NewRef(values[i]));
    }
    for (Py_ssize_t i = npositional; i < nvalues; i++) {
        if (PyDict_SetItem(keywords, PyTuple_GET_ITEM(names, i), values[i]) < 0) {
            goto done;
        }
    }
    result = PyObject_CallFunctionObjArgs(failed, value, positional, keywords, NULL);
done:
    Py_XDECREF(positional);
    Py_XDECREF(keywords);
    if (result != NULL || !PyErr_Occurred()) {  /* failed() always raises; should it not, the error stands */
        Py_XDECREF(result);
        PyErr_Restore(type, value, traceback);
        return NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return NULL;
}


static PyObject *
lane_vectorcall(LaneCall *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyObject *buffer[LANE_MAX_PARAMS + 1];  /* one free slot first: JAX may use it (PY_VECTORCALL_ARGUMENTS_OFFSET) */
    PyObject **full = buffer + 1;
    int taken = lane_arrange(self, args, PyVectorcall_NARGS(nargsf), kwnames, full);
    if (taken <= 0) {
        if (taken < 0) {
            return NULL;
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    for (Py_ssize_t i = 0; i < self->nstatic; i++) {
        int admitted = lane_admits(self, full[self->static_index[i]]);
        if (admitted <= 0) {
            if (admitted < 0) {
                return NULL;
            }
            return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
        }
    }
    if (count_hit(self->calls) < 0) {
        return NULL;
    }
    PyObject *result = PyObject_Vectorcall(self->program, full, self->npositional | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                           self->kwonly);
    if (result == NULL) {
        return hand_failure(self->failed, full, self->npositional, self->names, self->nparams);
    }
    return result;
}

/* Both hits start alike: PyObject_HEAD, the object's own vectorcall, the hit proper, the bound fallback. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    vectorcallfunc call;
    PyObject *fallback;  /* types.MethodType(generated __call__, the function) */
} Hit;

/* A hit is its function's class's ``__call__``, and behaves as the generated ``__call__`` it stands for, a method:
   ``type(f).__call__(f, x)`` and ``f.__call__(x)`` pass the function first (it is a method descriptor, so Python
   binds it as it binds a function). The function's own call slot (``Base``) calls the hit proper, with no function
   in front. A first argument other than the function goes, with the arguments as given, to the unbound generated
   code (which raises what a Python ``__call__`` raises). */
static PyObject *
hit_method_call(Hit *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *fallback = self->fallback;
    if (!PyMethod_Check(fallback)) {  /* the constructors check it: never reached */
        PyErr_SetString(PyExc_TypeError, "a jaxstatic hit without its function");
        return NULL;
    }
    if (nargs >= 1 && args[0] == PyMethod_GET_SELF(fallback)) {
        /* args[0] is the caller's: the callee may use it as its free slot (and restores it) */
        return self->call((PyObject *)self, args + 1, (nargs - 1) | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
    }
    return PyObject_Vectorcall(PyMethod_GET_FUNCTION(fallback), args, nargsf, kwnames);
}

/* ``f.__call__``: bound to ``f``, as a function would be; on the class, the hit itself. */
static PyObject *
hit_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}
static PyObject *
lane_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"program", "fallback", "failed", "allowed", "kept", "names", "kwonly",
                               "positional_only", "statics", "calls", "defaults", "missing", NULL};
    PyObject *program, *fallback, *failed, *allowed, *kept, *names, *kwonly, *statics, *calls, *defaults, *missing;
    Py_ssize_t npositional_only;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOOO!O!O!O!nO!OO!O:LaneCall", keywords, &program, &fallback,
                                     &failed, &PyFrozenSet_Type, &allowed, &PyDict_Type, &kept, &PyTuple_Type,
                                     &names, &PyTuple_Type, &kwonly, &npositional_only, &PyTuple_Type, &statics,
                                     &calls, &PyTuple_Type, &defaults, &missing)) {
        return NULL;
    }
    if (!PyMethod_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "LaneCall: fallback must be a bound method");
        return NULL;
    }
    if (PyTuple_GET_SIZE(defaults) != PyTuple_GET_SIZE(names) ||
            PyTuple_GET_SIZE(kwonly) > PyTuple_GET_SIZE(names)) {
        PyErr_SetString(PyExc_ValueError, "LaneCall: one default (or missing) per parameter; kwonly among names");
        return NULL;
    }
    if (Py_TYPE(calls)->tp_iternext == NULL) {
        PyErr_SetString(PyExc_TypeError, "LaneCall: calls must be an iterator");
        return NULL;
    }
    Py_ssize_t nparams = PyTuple_GET_SIZE(names);
    Py_ssize_t nstatic = PyTuple_GET_SIZE(statics);
    for (Py_ssize_t i = 0; i < nparams; i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, i))) {
            PyErr_SetString(PyExc_TypeError, "LaneCall: names must be strings");
            return NULL;
        }
    }
    Py_ssize_t *index = PyMem_New(Py_ssize_t, nstatic > 0 ? nstatic : 1);
    if (index == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < nstatic; i++) {
        index[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(statics, i));
        if (index[i] < 0 || index[i] >= nparams) {
            PyMem_Free(index);
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "LaneCall: a static position outside the parameters");
            }
            return NULL;
        }
    }
    LaneCall *self = (LaneCall *)type->tp_alloc(type, 0);
    if (self == NULL) {
        PyMem_Free(index);
        return NULL;
    }
    self->vectorcall = (vectorcallfunc)hit_method_call;
    self->call = (vectorcallfunc)lane_vectorcall;
    self->program = Py_NewRef(program);
    self->fallback = Py_NewRef(fallback);
    self->failed = Py_NewRef(failed);
    self->allowed = Py_NewRef(allowed);
    self->kept = Py_NewRef(kept);
    self->names = Py_NewRef(names);
    self->kwonly = PyTuple_GET_SIZE(kwonly) > 0 ? Py_NewRef(kwonly) : NULL;
    self->calls = Py_NewRef(calls);
    self->statics = Py_NewRef(statics);
    self->defaults = Py_NewRef(defaults);
    self->missing = Py_NewRef(missing);
    self->nparams = nparams;
    self->npositional = nparams - PyTuple_GET_SIZE(kwonly);
    self->npositional_only = npositional_only;
    self->nstatic = nstatic;
    self->static_index = index;
    PyTypeObject *common[] = {&PyLong_Type, &PyUnicode_Type, &PyBool_Type, Py_TYPE(Py_None)};
    self->ncommon = 0;
    for (int i = 0; i < 4; i++) {
        int found = PySet_Contains(allowed, (PyObject *)common[i]);
        if (found < 0) {
            Py_DECREF(self);
            return NULL;
        }
        if (found) {
            self->common[self->ncommon++] = common[i];
        }
    }
    return (PyObject *)self;
}

static PyObject *
lane_call(LaneCall *self, PyObject *args, PyObject *kwargs)
{
    return PyVectorcall_Call((PyObject *)self, args, kwargs);
}

static int
lane_traverse(LaneCall *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->program);
    Py_VISIT(self->fallback);
    Py_VISIT(self->failed);
    Py_VISIT(self->allowed);
    Py_VISIT(self->kept);
    Py_VISIT(self->names);
    Py_VISIT(self->kwonly);
    Py_VISIT(self->calls);
    Py_VISIT(self->statics);
    Py_VISIT(self->defaults);
    Py_VISIT(self->missing);
    return 0;
}

static int
lane_clear(LaneCall *self)
{
    Py_CLEAR(self->program);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->failed);
    Py_CLEAR(self->allowed);
    Py_CLEAR(self->kept);
    Py_CLEAR(self->names);
    Py_CLEAR(self->kwonly);
    Py_CLEAR(self->calls);
    Py_CLEAR(self->statics);
    Py_CLEAR(self->defaults);
    Py_CLEAR(self->missing);
    return 0;
}

static void
lane_dealloc(LaneCall *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    lane_clear(self);
    PyMem_Free(self->static_index);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyObject *
lane_repr(LaneCall *self)
{
    return PyUnicode_FromFormat("<jaxstatic exact-key lane, static positions %R>", self->statics);
}

static PyMemberDef lane_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(LaneCall, vectorcall), READONLY, NULL},
    {"fallback", T_OBJECT, offsetof(LaneCall, fallback), READONLY, "The generated __call__: every other call."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot lane_slots[] = {
    {Py_tp_doc, "LaneCall(*, program, fallback, failed, allowed, kept, names, kwonly, positional_only, statics, calls,\n"
                "         defaults, missing)\n"
                "--\n\nA cache hit of the exact-key lane, called in C (jaxstatic._lane)."},
    {Py_tp_new, lane_new},
    {Py_tp_call, lane_call},
    {Py_tp_descr_get, hit_descr_get},
    {Py_tp_traverse, lane_traverse},
    {Py_tp_clear, lane_clear},
    {Py_tp_dealloc, lane_dealloc},
    {Py_tp_repr, lane_repr},
    {Py_tp_members, lane_members},
    {0, NULL},
};

static PyType_Spec lane_spec = {
    "jaxstatic._hits.LaneCall",
    sizeof(LaneCall),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    lane_slots,
};

/* ---- KeyCall: the general path's hit for one call shape ------------------------------------------------------ */

#define KEY_MAX_DYNAMIC 64  /* a shape with more dynamic values keeps its generated dispatcher */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;  /* as the class's __call__: the function first (hit_method_call) */
    vectorcallfunc call;        /* the call's own arguments alone (key_vectorcall): what Base's slot calls */
    PyObject *fallback;    /* the generated dispatcher of this shape, bound: every call this does not serve */
    PyObject *failed;      /* failed(exception, args, kwargs): raises what the user sees */
    PyObject *cache;       /* the function's OrderedDict: flat key -> program */
    PyObject *remembered;  /* IdentityMemo's dict: id -> (value, pair, keys or items, values, length) */
    PyObject *contents;    /* IdentityMemo's dict: contents signature -> (pair, objects held) */
    PyObject *nested;      /* IdentityMemo's dict: key ids -> positions of tuple values */
    PyObject *shallow;     /* IdentityMemo's dict: tuple type -> whether it is its items and nothing else */
    PyObject *atomic;      /* frozenset: _freeze.ATOMIC, the types whose value is its own key */
    PyObject *calls;       /* itertools.count of the function's calls */
    PyObject *touch;       /* touch(key): keep the cache's order of use */
    PyObject *vid;         /* the shape's first key item */
    PyObject *statics;     /* per static parameter: its position (int), or the constant pair of its default */
    PyObject *dynamics;    /* tuple of the dynamic parameters' positions, as the program takes them */
    PyObject *kwnames;     /* the shape's keyword names, in order (a position nargs + j is kwnames[j]'s value) */
    PyObject *names;       /* (None,) * nargs + kwnames: what hand_failure names each value by */
    PyObject *other;       /* the hit of another shape, tried when a call is not of this one; or NULL */
    Py_ssize_t nargs;
    Py_ssize_t nkw;
    Py_ssize_t nstatic;
    Py_ssize_t ndynamic;
    Py_ssize_t *static_index;  /* -1 for a constant default */
    Py_ssize_t *dynamic_index;
} KeyCall;

/* The key pair of a container remembered by identity (``_memo.IdentityMemo``) that still holds the very objects
   it held (``_memo.unchanged``): 1 with *type and *value set (new references), 0 when not remembered or changed,
   -1 with an exception set. Nothing here runs Python code: the lookup is by an int, the checks by identity, so
   ``held`` (borrowed) stays valid until its items are taken. */
static int
key_remembered(KeyCall *self, PyObject *value, PyObject **type, PyObject **frozen)
{
    PyObject *id = PyLong_FromVoidPtr(value);
    if (id == NULL) {
        return -1;
    }
    PyObject *held = PyDict_GetItemWithError(self->remembered, id);  /* borrowed */
    Py_DECREF(id);
    if (held == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (!PyTuple_CheckExact(held) || PyTuple_GET_SIZE(held) != 5 || PyTuple_GET_ITEM(held, 0) != value) {
        return 0;
    }
    Py_ssize_t length = PyLong_AsSsize_t(PyTuple_GET_ITEM(held, 4));
    if (length == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (length >= 0) {  /* a dict or list: valid while it holds the same objects, in order (identity, never ==) */
        PyObject *keys = PyTuple_GET_ITEM(held, 2), *values = PyTuple_GET_ITEM(held, 3);
        if (PyDict_CheckExact(value)) {
            if (PyDict_GET_SIZE(value) != length || PyTuple_GET_SIZE(keys) != length ||
                    PyTuple_GET_SIZE(values) != length) {
                return 0;
            }
            Py_ssize_t pos = 0, i = 0;
            PyObject *k, *v;
            while (PyDict_Next(value, &pos, &k, &v)) {
                if (i >= length || k != PyTuple_GET_ITEM(keys, i) || v != PyTuple_GET_ITEM(values, i)) {
                    return 0;
                }
                i++;
            }
        }
        else if (PyList_CheckExact(value)) {
            if (PyList_GET_SIZE(value) != length || PyTuple_GET_SIZE(keys) != length) {
                return 0;
            }
            for (Py_ssize_t i = 0; i < length; i++) {
                if (PyList_GET_ITEM(value, i) != PyTuple_GET_ITEM(keys, i)) {
                    return 0;
                }
            }
        }
        else {
            return 0;
        }
    }
    PyObject *pair = PyTuple_GET_ITEM(held, 1);
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
        return 0;
    }
    *type = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
    *frozen = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
    return 1;
}

/* The key pair of a dict rebuilt from the same objects as one remembered by its contents (``IdentityMemo``'s
   ``_signature``: the ids of its keys, and of its values, a plain or named tuple value by its type and its items'
   ids): 1 with *type and *value set (new references), 0 when not found or when Python must decide (a tuple type
   not yet judged), -1 with an exception set. Looking a type up may run Python code (a metaclass's ``__hash__``,
   which may even clear the memo): every object read across such a lookup is held by a strong reference. */
static int
key_by_contents(KeyCall *self, PyObject *dict, PyObject **type, PyObject **frozen)
{
    Py_ssize_t n = PyDict_GET_SIZE(dict);
    PyObject *kids = PyTuple_New(n), *values = PyTuple_New(n), *ids = PyTuple_New(n), *signature = NULL;
    PyObject *nested = NULL, *found = NULL;
    int result = -1;
    if (kids == NULL || values == NULL || ids == NULL) {
        goto done;
    }
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    while (PyDict_Next(dict, &pos, &k, &v)) {
        PyObject *kid = PyLong_FromVoidPtr(k), *vid = PyLong_FromVoidPtr(v);
        if (kid == NULL || vid == NULL) {
            Py_XDECREF(kid);
            Py_XDECREF(vid);
            goto done;
        }
        PyTuple_SET_ITEM(kids, i, kid);
        PyTuple_SET_ITEM(ids, i, vid);
        PyTuple_SET_ITEM(values, i, Py_NewRef(v));
        i++;
    }
    nested = PyDict_GetItemWithError(self->nested, kids);  /* a tuple of ints: no Python code runs */
    if (nested == NULL && PyErr_Occurred()) {
        goto done;
    }
    Py_XINCREF(nested);  /* held: the type lookups below may run Python code that clears the memo */
    if (nested != NULL && PyTuple_CheckExact(nested)) {
        for (Py_ssize_t m = 0; m < PyTuple_GET_SIZE(nested); m++) {
            Py_ssize_t j = PyLong_AsSsize_t(PyTuple_GET_ITEM(nested, m));
            if (j == -1 && PyErr_Occurred()) {
                goto done;
            }
            if (j < 0 || j >= n) {
                result = 0;
                goto done;
            }
            PyObject *item = PyTuple_GET_ITEM(values, j);
            /* ``shallow`` is only compared with True, never read: borrowed is enough */
            PyObject *shallow = PyDict_GetItemWithError(self->shallow, (PyObject *)Py_TYPE(item));
            if (shallow == NULL) {
                result = PyErr_Occurred() ? -1 : 0;  /* a type not judged yet: Python judges it */
                goto done;
            }
            if (shallow != Py_True) {
                continue;
            }
            if (!PyTuple_Check(item)) {
                result = 0;
                goto done;
            }
            Py_ssize_t len = PyTuple_GET_SIZE(item);
            PyObject *inner = PyTuple_New(len);
            if (inner == NULL) {
                goto done;
            }
            for (Py_ssize_t q = 0; q < len; q++) {
                PyObject *iid = PyLong_FromVoidPtr(PyTuple_GET_ITEM(item, q));
                if (iid == NULL) {
                    Py_DECREF(inner);
                    goto done;
                }
                PyTuple_SET_ITEM(inner, q, iid);
            }
            PyObject *typed = PyTuple_Pack(2, (PyObject *)Py_TYPE(item), inner);
            Py_DECREF(inner);
            if (typed == NULL) {
                goto done;
            }
            PyObject *old = PyTuple_GET_ITEM(ids, j);
            PyTuple_SET_ITEM(ids, j, typed);
            Py_DECREF(old);
        }
    }
    signature = PyTuple_Pack(2, kids, ids);
    if (signature == NULL) {
        goto done;
    }
    found = PyDict_GetItemWithError(self->contents, signature);  /* (pair, objects held) */
    if (found == NULL) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    Py_INCREF(found);  /* held: the signature's hash ran type hashes; the decrefs below may run finalizers */
    PyObject *pair = PyTuple_CheckExact(found) && PyTuple_GET_SIZE(found) == 2 ? PyTuple_GET_ITEM(found, 0) : NULL;
    if (pair == NULL || !PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
        result = 0;
        goto done;
    }
    *type = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
    *frozen = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
    result = 1;
done:
    Py_XDECREF(found);
    Py_XDECREF(nested);
    Py_XDECREF(kids);
    Py_XDECREF(values);
    Py_XDECREF(ids);
    Py_XDECREF(signature);
    return result;
}

/* The flat cache key of this call (``_codegen``: vid, then a type and a value per static parameter), as the
   generated dispatcher builds it; NULL with no exception when a value needs the dispatcher (a container not
   remembered, a float zero or NaN, any other object: to be frozen). */
static PyObject *
key_of(KeyCall *self, PyObject *const *args)
{
    PyObject *key = PyTuple_New(1 + 2 * self->nstatic);
    if (key == NULL) {
        return NULL;
    }
    PyTuple_SET_ITEM(key, 0, Py_NewRef(self->vid));
    for (Py_ssize_t i = 0; i < self->nstatic; i++) {
        PyObject *type, *value;  /* new references, set into the key */
        if (self->static_index[i] < 0) {
            PyObject *pair = PyTuple_GET_ITEM(self->statics, i);
            type = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
            value = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
        }
        else {
            /* the caller's argument, held by the caller for the whole call; its type held by it */
            PyObject *given = args[self->static_index[i]];
            int atomic = PySet_Contains(self->atomic, (PyObject *)Py_TYPE(given));  /* a metaclass may hash */
            if (atomic < 0) {
                Py_DECREF(key);
                return NULL;
            }
            /* a float other than a zero or NaN is its own exact key, as _freeze gives it */
            if (atomic || (PyFloat_CheckExact(given) && PyFloat_AS_DOUBLE(given) != 0.0 &&
                           !Py_IS_NAN(PyFloat_AS_DOUBLE(given)))) {
                type = Py_NewRef((PyObject *)Py_TYPE(given));
                value = Py_NewRef(given);
            }
            else {
                int found = key_remembered(self, given, &type, &value);
                if (found == 0 && PyDict_CheckExact(given)) {
                    found = key_by_contents(self, given, &type, &value);
                }
                if (found <= 0) {
                    Py_DECREF(key);
                    return NULL;
                }
            }
        }
        PyTuple_SET_ITEM(key, 1 + 2 * i, type);
        PyTuple_SET_ITEM(key, 2 + 2 * i, value);
    }
    return key;
}


/* Whether a call is of this hit's shape: as many positional values, the same keyword names in the same order (as
   the generated code finds a keyword shape by ``tuple(kwargs)``). Returns 1, 0, or -1 with an exception set. */
static int
key_same_shape(KeyCall *self, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs != self->nargs || nkw != self->nkw) {
        return 0;
    }
    for (Py_ssize_t j = 0; j < nkw; j++) {
        int same = lane_same_name(PyTuple_GET_ITEM(kwnames, j), PyTuple_GET_ITEM(self->kwnames, j));
        if (same <= 0) {
            return same;
        }
    }
    return 1;
}

static PyObject *
key_vectorcall(KeyCall *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    int same = key_same_shape(self, PyVectorcall_NARGS(nargsf), kwnames);
    if (same <= 0) {
        if (same < 0) {
            return NULL;
        }
        if (self->other != NULL) {  /* another shape's hit: a keyword call's, or the positional one */
            return ((KeyCall *)self->other)->call(self->other, args, nargsf, kwnames);
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    PyObject *key = key_of(self, args);
    if (key == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    PyObject *program = PyDict_GetItemWithError(self->cache, key);  /* borrowed: held below for the call */
    if (program == NULL) {  /* a miss: the dispatcher counts it and traces */
        Py_DECREF(key);
        if (PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_Exception)) {
                return NULL;
            }
            /* a key's __hash__ or __eq__ raised: the dispatcher looks it up again and says which, as it does */
            PyErr_Clear();
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    Py_INCREF(program);
    if (count_hit(self->calls) < 0) {
        goto error;
    }
    if (PyDict_GET_SIZE(self->cache) > 1) {  /* hashes the key again: may raise, which is a failed call */
        PyObject *touched = PyObject_CallOneArg(self->touch, key);
        if (touched == NULL) {
            Py_DECREF(key);
            Py_DECREF(program);
            return hand_failure(self->failed, args, self->nargs, self->names, self->nargs + self->nkw);
        }
        Py_DECREF(touched);
    }
    Py_DECREF(key);
    PyObject *buffer[KEY_MAX_DYNAMIC + 1];
    for (Py_ssize_t i = 0; i < self->ndynamic; i++) {
        buffer[i + 1] = args[self->dynamic_index[i]];
    }
    PyObject *result = PyObject_Vectorcall(program, buffer + 1, self->ndynamic | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(program);
    if (result == NULL) {
        return hand_failure(self->failed, args, self->nargs, self->names, self->nargs + self->nkw);
    }
    return result;

error:
    Py_DECREF(key);
    Py_DECREF(program);
    return NULL;
}

static Py_ssize_t *
key_positions(PyObject *tuple, Py_ssize_t limit, int constants)
{
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    Py_ssize_t *index = PyMem_New(Py_ssize_t, n > 0 ? n : 1);
    if (index == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (constants && PyTuple_CheckExact(item) && PyTuple_GET_SIZE(item) == 2) {
            index[i] = -1;
            continue;
        }
        index[i] = PyLong_AsSsize_t(item);
        if (index[i] < 0 || index[i] >= limit) {
            PyMem_Free(index);
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "KeyCall: a position outside the call");
            }
            return NULL;
        }
    }
    return index;
}

static PyObject *
key_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"fallback", "failed", "cache", "remembered", "contents", "nested", "shallow",
                               "atomic", "calls", "touch", "vid", "nargs", "statics", "dynamics", "kwnames", "other",
                               NULL};
    PyObject *fallback, *failed, *cache, *remembered, *contents, *nested, *shallow, *atomic, *calls, *touch, *vid,
        *statics, *dynamics, *kwnames, *other;
    Py_ssize_t nargs;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOO!O!O!O!O!O!OOOnO!O!O!O:KeyCall", keywords, &fallback,
                                     &failed, &PyDict_Type, &cache, &PyDict_Type, &remembered, &PyDict_Type,
                                     &contents, &PyDict_Type, &nested, &PyDict_Type, &shallow, &PyFrozenSet_Type,
                                     &atomic, &calls, &touch, &vid, &nargs, &PyTuple_Type, &statics, &PyTuple_Type,
                                     &dynamics, &PyTuple_Type, &kwnames, &other)) {
        return NULL;
    }
    if (other != Py_None && !Py_IS_TYPE(other, type)) {
        PyErr_SetString(PyExc_TypeError, "KeyCall: other must be a KeyCall or None");
        return NULL;
    }
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t j = 0; j < nkw; j++) {
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(kwnames, j))) {
            PyErr_SetString(PyExc_TypeError, "KeyCall: kwnames must be strings");
            return NULL;
        }
    }
    if (nargs < 0) {
        PyErr_SetString(PyExc_ValueError, "KeyCall: nargs must be at least 0");
        return NULL;
    }
    PyObject *names = PyTuple_New(nargs + nkw);
    if (names == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs + nkw; i++) {
        PyTuple_SET_ITEM(names, i, Py_NewRef(i < nargs ? Py_None : PyTuple_GET_ITEM(kwnames, i - nargs)));
    }
    if (!PyMethod_Check(fallback) || Py_TYPE(calls)->tp_iternext == NULL ||
            PyTuple_GET_SIZE(dynamics) > KEY_MAX_DYNAMIC) {
        PyErr_SetString(PyExc_ValueError,
                        "KeyCall: fallback must be a bound method, calls an iterator, and dynamics at most 64");
        return NULL;
    }
    Py_ssize_t *static_index = key_positions(statics, nargs + nkw, 1);
    if (static_index == NULL) {
        Py_DECREF(names);
        return NULL;
    }
    Py_ssize_t *dynamic_index = key_positions(dynamics, nargs + nkw, 0);
    if (dynamic_index == NULL) {
        Py_DECREF(names);
        PyMem_Free(static_index);
        return NULL;
    }
    KeyCall *self = (KeyCall *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(names);
        PyMem_Free(static_index);
        PyMem_Free(dynamic_index);
        return NULL;
    }
    self->vectorcall = (vectorcallfunc)hit_method_call;
    self->call = (vectorcallfunc)key_vectorcall;
    self->fallback = Py_NewRef(fallback);
    self->failed = Py_NewRef(failed);
    self->cache = Py_NewRef(cache);
    self->remembered = Py_NewRef(remembered);
    self->contents = Py_NewRef(contents);
    self->nested = Py_NewRef(nested);
    self->shallow = Py_NewRef(shallow);
    self->atomic = Py_NewRef(atomic);
    self->calls = Py_NewRef(calls);
    self->touch = Py_NewRef(touch);
    self->vid = Py_NewRef(vid);
    self->statics = Py_NewRef(statics);
    self->dynamics = Py_NewRef(dynamics);
    self->kwnames = nkw > 0 ? Py_NewRef(kwnames) : NULL;
    self->names = names;
    self->other = other == Py_None ? NULL : Py_NewRef(other);
    self->nargs = nargs;
    self->nkw = nkw;
    self->nstatic = PyTuple_GET_SIZE(statics);
    self->ndynamic = PyTuple_GET_SIZE(dynamics);
    self->static_index = static_index;
    self->dynamic_index = dynamic_index;
    return (PyObject *)self;
}

static PyObject *
key_call(KeyCall *self, PyObject *args, PyObject *kwargs)
{
    return PyVectorcall_Call((PyObject *)self, args, kwargs);
}

static int
key_traverse(KeyCall *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->fallback);
    Py_VISIT(self->failed);
    Py_VISIT(self->cache);
    Py_VISIT(self->remembered);
    Py_VISIT(self->contents);
    Py_VISIT(self->nested);
    Py_VISIT(self->shallow);
    Py_VISIT(self->atomic);
    Py_VISIT(self->calls);
    Py_VISIT(self->touch);
    Py_VISIT(self->vid);
    Py_VISIT(self->statics);
    Py_VISIT(self->dynamics);
    Py_VISIT(self->kwnames);
    Py_VISIT(self->names);
    Py_VISIT(self->other);
    return 0;
}

static int
key_clear(KeyCall *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->failed);
    Py_CLEAR(self->cache);
    Py_CLEAR(self->remembered);
    Py_CLEAR(self->contents);
    Py_CLEAR(self->nested);
    Py_CLEAR(self->shallow);
    Py_CLEAR(self->atomic);
    Py_CLEAR(self->calls);
    Py_CLEAR(self->touch);
    Py_CLEAR(self->vid);
    Py_CLEAR(self->statics);
    Py_CLEAR(self->dynamics);
    Py_CLEAR(self->kwnames);
    Py_CLEAR(self->names);
    Py_CLEAR(self->other);
    return 0;
}

static void
key_dealloc(KeyCall *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    key_clear(self);
    PyMem_Free(self->static_index);
    PyMem_Free(self->dynamic_index);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyObject *
key_repr(KeyCall *self)
{
    if (self->kwnames != NULL) {
        return PyUnicode_FromFormat("<jaxstatic cache hit of %zd positional arguments and keywords %R>", self->nargs,
                                    self->kwnames);
    }
    return PyUnicode_FromFormat("<jaxstatic cache hit of %zd positional arguments>", self->nargs);
}

static PyMemberDef key_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(KeyCall, vectorcall), READONLY, NULL},
    {"fallback", T_OBJECT, offsetof(KeyCall, fallback), READONLY, "The generated dispatcher: every other call."},
    {"other", T_OBJECT, offsetof(KeyCall, other), READONLY, "The hit of another call shape, tried next, or None."},
    {"nargs", T_PYSSIZET, offsetof(KeyCall, nargs), READONLY, "The shape's number of positional values."},
    {"kwnames", T_OBJECT, offsetof(KeyCall, kwnames), READONLY, "The shape's keyword names, or None."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot key_slots[] = {
    {Py_tp_doc, "KeyCall(*, fallback, failed, cache, remembered, contents, nested, shallow, atomic, calls, touch,\n"
                "        vid, nargs, statics, dynamics, kwnames, other)\n--\n\n"
                "A cache hit of the general path for one call shape, called in C."},
    {Py_tp_new, key_new},
    {Py_tp_call, key_call},
    {Py_tp_descr_get, hit_descr_get},
    {Py_tp_traverse, key_traverse},
    {Py_tp_clear, key_clear},
    {Py_tp_dealloc, key_dealloc},
    {Py_tp_repr, key_repr},
    {Py_tp_members, key_members},
    {0, NULL},
};

static PyType_Spec key_spec = {
    "jaxstatic._hits.KeyCall",
    sizeof(KeyCall),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    key_slots,
};

/* ---- Base: jaxstatic's functions called straight into their hit ------------------------------------------------ */

/* Python calls an object whose class defines ``__call__`` in Python by packing its arguments into a tuple (and its
   keywords into a dict), even where that ``__call__`` is one of the hits above; on a 2-core machine that packing
   was 2% of a ``jax.jit`` hit, and 6% for a call with a keyword. ``StaticFunction`` derives from ``Base``, whose
   instances carry their own vectorcall slot: ``attach(function, hit)`` points it at the hit, so the call goes from
   the caller's frame to the hit with no tuple, dict or frame in between, and ``attach(function, None)`` returns the
   function to its class's ``__call__``. The class keeps that hit as ``__call__`` as well (``_core.Core._specialize``),
   so a call by the argument-tuple protocol (``f(*args, **kwargs)``), through ``f.__call__`` or through
   ``type(f).__call__(f, ...)`` (the hit is a method descriptor: ``hit_method_call``) reaches the same code. */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;  /* NULL: the class's __call__ takes every call */
    PyObject *hit;              /* the LaneCall or KeyCall the slot forwards to, or NULL */
} Base;

static PyObject *
base_vectorcall(Base *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyObject *hit = self->hit;
    Py_INCREF(hit);  /* a miss may attach another hit (or none) while this one runs */
    PyObject *result = ((Hit *)hit)->call(hit, args, nargsf, kwnames);  /* the hit proper: no function first */
    Py_DECREF(hit);
    return result;
}

static int
base_traverse(Base *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->hit);
    return 0;
}

static int
base_clear(Base *self)
{
    self->vectorcall = NULL;
    Py_CLEAR(self->hit);
    return 0;
}

static void
base_dealloc(Base *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    base_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMemberDef base_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Base, vectorcall), READONLY, NULL},
    {"_call_slot", T_OBJECT, offsetof(Base, hit), READONLY, "The hit in C that calls go straight to, or None."},
    {NULL},
};

/* No tp_new: object's own is inherited, which lays out the instance dict of a Python subclass (StaticFunction) the
   way the interpreter's attribute caches expect. PyType_GenericNew does not, and then every attribute read of a
   jaxstatic function missed those caches (measured: decoration 18% slower). */
static PyType_Slot base_slots[] = {
    {Py_tp_doc, "The base of jaxstatic's functions: a call goes straight to the hit attach() gave it, if any."},
    {Py_tp_traverse, base_traverse},
    {Py_tp_clear, base_clear},
    {Py_tp_dealloc, base_dealloc},
    {Py_tp_members, base_members},
    {0, NULL},
};

static PyType_Spec base_spec = {
    "jaxstatic._hits.Base",
    sizeof(Base),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    base_slots,
};

/* ---- Recorder: a donating program that notes where each call donated ------------------------------------------- */

/* ``_donate.recording``'s hit: JAX's program called as it was, then, once it succeeded (a refused call donated
   nothing), each donated argument noted with the caller's code and instruction offset, for an error that later
   meets a deleted array to name the donating call. In Python that was a frame of its own, ``*args`` packing and a
   ``sys._getframe``: ~0.9 us on a 21 us step of 8 arrays, 4% of a ``jax.jit`` hit (``benchmarks/donation.py``).
   Calls it does not take whole go to ``watch``, the Python path: the first call (JAX's warning about donations it
   could not use decides how to record), strict donation, and a program that records weak references. ``weak`` is
   the list the Python path keeps that verdict in (None until the first call, then True or False): read after each
   call it takes, so that the Python path holds no reference to the Recorder (a cycle would keep a dropped program
   alive until the garbage collector ran). */

static int strict_switch = 0;  /* ``set_strict_donation``'s switch, mirrored by ``strict_donation(flag)`` */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *program;   /* jax.jit of the traced body, with donate_argnums */
    PyObject *watch;     /* the Python path, same arguments */
    PyObject *append;    /* _donate._held.append */
    PyObject *function;  /* the function's display name */
    PyObject *pairs;     /* tuple of (position, parameter name) per donated argument */
    PyObject *ours;      /* tuple of the filename prefixes of jaxstatic's frames (its package, its generated code) */
    PyObject *weak;      /* list: [None], then [False] (recorded strongly: taken here) or [True] */
    int steady;          /* 1 once weak reads [False]: calls are taken here */
    int strict;          /* strict_donation=: 1, 0, or -1 to follow the switch */
} Recorder;

static int
recorder_ours(Recorder *self, PyCodeObject *code)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->ours); i++) {
        Py_ssize_t match = PyUnicode_Tailmatch(code->co_filename, PyTuple_GET_ITEM(self->ours, i), 0,
                                               PY_SSIZE_T_MAX, -1);
        if (match != 0) {
            return (int)match;  /* 1, or -1 with an exception set */
        }
    }
    return 0;
}

/* The caller's frame outside jaxstatic (a hit in C has none of its own; the generated dispatcher does), as
   ``_donate._caller``: a new reference, or NULL (with no exception when there is no Python frame). */
static PyFrameObject *
recorder_caller(Recorder *self)
{
    PyFrameObject *frame = PyEval_GetFrame();  /* borrowed */
    if (frame == NULL) {
        return NULL;
    }
    Py_INCREF(frame);
    for (;;) {
        PyCodeObject *code = PyFrame_GetCode(frame);
        int ours = recorder_ours(self, code);
        Py_DECREF(code);
        if (ours < 0) {
            Py_DECREF(frame);
            return NULL;
        }
        PyFrameObject *back = ours ? PyFrame_GetBack(frame) : NULL;
        if (back == NULL) {
            return frame;
        }
        Py_DECREF(frame);
        frame = back;
    }
}

static int
recorder_note(Recorder *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyFrameObject *frame = recorder_caller(self);
    if (frame == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    PyCodeObject *code = PyFrame_GetCode(frame);
#if PY_VERSION_HEX >= 0x030B0000
    int offset = PyFrame_GetLasti(frame);
#else
    int offset = frame->f_lasti < 0 ? -1 : frame->f_lasti * (int)sizeof(_Py_CODEUNIT);
#endif
    Py_DECREF(frame);
    PyObject *where = PyLong_FromLong(offset);
    int status = where == NULL ? -1 : 0;
    for (Py_ssize_t j = 0; status == 0 && j < PyTuple_GET_SIZE(self->pairs); j++) {
        PyObject *pair = PyTuple_GET_ITEM(self->pairs, j);
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0));
        if (i == -1 && PyErr_Occurred()) {
            status = -1;
            break;
        }
        if (i >= nargs) {
            continue;
        }
        PyObject *note = PyTuple_Pack(5, args[i], self->function, PyTuple_GET_ITEM(pair, 1), (PyObject *)code, where);
        PyObject *done = note == NULL ? NULL : PyObject_CallOneArg(self->append, note);
        Py_XDECREF(note);
        if (done == NULL) {
            status = -1;
        }
        Py_XDECREF(done);
    }
    Py_XDECREF(where);
    Py_DECREF(code);
    return status;
}

static PyObject *
recorder_vectorcall(Recorder *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (!self->steady || self->strict == 1 || (self->strict == -1 && strict_switch)) {
        PyObject *watched = PyObject_Vectorcall(self->watch, args, nargsf, kwnames);
        if (watched != NULL && !self->steady && PyList_GET_SIZE(self->weak) == 1
                && PyList_GET_ITEM(self->weak, 0) == Py_False) {
            self->steady = 1;
        }
        return watched;
    }
    PyObject *result = PyObject_Vectorcall(self->program, args, nargsf, kwnames);
    if (result != NULL && recorder_note(self, args, PyVectorcall_NARGS(nargsf)) < 0) {
        Py_CLEAR(result);
    }
    return result;
}

static PyObject *
recorder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"program", "watch", "append", "function", "pairs", "ours", "strict", "weak", NULL};
    PyObject *program, *watch, *append, *function, *pairs, *ours, *weak;
    int strict;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOOUO!O!iO!:Recorder", keywords, &program, &watch, &append,
                                     &function, &PyTuple_Type, &pairs, &PyTuple_Type, &ours, &strict, &PyList_Type,
                                     &weak)) {
        return NULL;
    }
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(pairs); j++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, j);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(pair, 0))
                || !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_Format(PyExc_TypeError, "Recorder: pairs holds (position, name) tuples, not %R", pair);
            return NULL;
        }
    }
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(ours); j++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(ours, j))) {
            PyErr_SetString(PyExc_TypeError, "Recorder: ours holds filename prefixes (str)");
            return NULL;
        }
    }
    Recorder *self = (Recorder *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->vectorcall = (vectorcallfunc)recorder_vectorcall;
    self->program = Py_NewRef(program);
    self->watch = Py_NewRef(watch);
    self->append = Py_NewRef(append);
    self->function = Py_NewRef(function);
    self->pairs = Py_NewRef(pairs);
    self->ours = Py_NewRef(ours);
    self->weak = Py_NewRef(weak);
    self->steady = 0;
    self->strict = strict < 0 ? -1 : strict > 0;
    return (PyObject *)self;
}

static PyObject *
recorder_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return PyVectorcall_Call(self, args, kwargs);
}

/* lower, trace, eval_shape, clear_cache, ...: the program's own */
static PyObject *
recorder_getattro(Recorder *self, PyObject *name)
{
    PyObject *found = PyObject_GenericGetAttr((PyObject *)self, name);
    if (found != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return found;
    }
    PyErr_Clear();
    return PyObject_GetAttr(self->program, name);
}

static int
recorder_traverse(Recorder *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->program);
    Py_VISIT(self->watch);
    Py_VISIT(self->append);
    Py_VISIT(self->function);
    Py_VISIT(self->pairs);
    Py_VISIT(self->ours);
    Py_VISIT(self->weak);
    return 0;
}

static int
recorder_clear(Recorder *self)
{
    Py_CLEAR(self->program);
    Py_CLEAR(self->watch);
    Py_CLEAR(self->append);
    Py_CLEAR(self->function);
    Py_CLEAR(self->pairs);
    Py_CLEAR(self->ours);
    Py_CLEAR(self->weak);
    return 0;
}

static void
recorder_dealloc(Recorder *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    recorder_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMemberDef recorder_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Recorder, vectorcall), READONLY, NULL},
    {"program", T_OBJECT, offsetof(Recorder, program), READONLY, "JAX's program."},
    {"steady", T_INT, offsetof(Recorder, steady), READONLY, "1: calls are taken here; 0: each goes to watch."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot recorder_slots[] = {
    {Py_tp_doc, "Recorder(*, program, watch, append, function, pairs, ours, strict, weak)\n--\n\n"
                "A donating program that notes, per call, where its donated arguments were donated."},
    {Py_tp_new, recorder_new},
    {Py_tp_call, recorder_call},
    {Py_tp_getattro, recorder_getattro},
    {Py_tp_traverse, recorder_traverse},
    {Py_tp_clear, recorder_clear},
    {Py_tp_dealloc, recorder_dealloc},
    {Py_tp_members, recorder_members},
    {0, NULL},
};

static PyType_Spec recorder_spec = {
    "jaxstatic._hits.Recorder",
    sizeof(Recorder),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    recorder_slots,
};

static PyObject *
hits_strict_donation(PyObject *module, PyObject *flag)
{
    int truth = PyObject_IsTrue(flag);
    if (truth < 0) {
        return NULL;
    }
    strict_switch = truth;
    Py_RETURN_NONE;
}

/* attach(function, hit): calls of ``function`` go straight to ``hit`` (a LaneCall or KeyCall), or, for None, to
   its class's ``__call__``. ``function``'s class must be its own (``_core.Core._specialize`` makes one per function):
   the class is marked as taking vectorcall, which Python reads from the class on each call and does not pass on to
   heap subclasses before 3.12 (nor keep after ``__call__`` is set on the class, from 3.12). */
static PyObject *
hits_attach(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "attach(function, hit) takes two arguments");
        return NULL;
    }
    PyObject *base_type = PyObject_GetAttrString(module, "Base");
    PyObject *lane_type = PyObject_GetAttrString(module, "LaneCall");
    PyObject *key_type = PyObject_GetAttrString(module, "KeyCall");
    PyObject *result = NULL;
    if (base_type == NULL || lane_type == NULL || key_type == NULL) {
        goto done;
    }
    PyObject *function = args[0], *hit = args[1];
    PyTypeObject *type = Py_TYPE(function);
    if (!PyObject_TypeCheck(function, (PyTypeObject *)base_type) || type == (PyTypeObject *)base_type
            || !(type->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        PyErr_Format(PyExc_TypeError, "attach() takes a jaxstatic function, not %R", function);
        goto done;
    }
    if (hit != Py_None && !Py_IS_TYPE(hit, (PyTypeObject *)lane_type) && !Py_IS_TYPE(hit, (PyTypeObject *)key_type)) {
        PyErr_Format(PyExc_TypeError, "attach() takes a LaneCall, a KeyCall or None, not %R", hit);
        goto done;
    }
    Base *self = (Base *)function;
    PyObject *old = self->hit;
    if (hit == Py_None) {
        self->vectorcall = NULL;
        self->hit = NULL;
    }
    else {
        self->hit = Py_NewRef(hit);
        self->vectorcall = (vectorcallfunc)base_vectorcall;
        type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    }
    Py_XDECREF(old);
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(base_type);
    Py_XDECREF(lane_type);
    Py_XDECREF(key_type);
    return result;
}

static PyMethodDef hits_methods[] = {
    {"strict_donation", hits_strict_donation, METH_O,
     "strict_donation(flag): whether a Recorder made with strict=-1 hands every call to its Python path."},
    {"attach", (PyCFunction)(void (*)(void))hits_attach, METH_FASTCALL,
     "attach(function, hit): calls of a jaxstatic function go straight to hit (a LaneCall or KeyCall), or, for "
     "None, to its class's __call__."},
    {NULL, NULL, 0, NULL},
};

static int
hits_exec(PyObject *module)
{
    PyType_Spec *specs[] = {&lane_spec, &key_spec, &counter_spec, &base_spec, &recorder_spec};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        PyObject *type = PyType_FromSpec(specs[i]);
        if (type == NULL) {
            return -1;
        }
        const char *name = strrchr(specs[i]->name, '.') + 1;  /* "jaxstatic._hits.LaneCall" -> "LaneCall" */
        if (PyModule_AddObject(module, name, type) < 0) {
            Py_DECREF(type);
            return -1;
        }
    }
    return 0;
}

/* Not declared free-threading safe: a Counter's increment, the dicts read while a hit runs and the borrowed
   references taken from them rely on the GIL. On a free-threaded build (3.13t), importing this module turns the
   GIL back on (Python warns), and jaxstatic stays exact; JAXSTATIC_PURE_PYTHON=1 keeps it off. */
static PyModuleDef_Slot hits_module_slots[] = {
    {Py_mod_exec, hits_exec},
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef hits_module = {
    PyModuleDef_HEAD_INIT,
    "jaxstatic._hits",
    "jaxstatic's cache hits in C (optional: jaxstatic works the same without it).",
    0,
    hits_methods,
    hits_module_slots,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__hits(void)
{
    return PyModuleDef_Init(&hits_module);
}
