"""Seeds that change every run: where a seeding call's seed comes from (for entropy-seed, and for
seed-missing, which leaves a script whose only seeding draws from entropy to it).

A seed is followed back through the file's assignments as `assignments.AssignmentTracer` records them (an
assignment counts when it runs with the argparse defaults); a seed that cannot be followed is unknown, and
unknown is never reported (a `hash()` is the exception: see `_salted_hash`). Entropy is: a missing or None
seed where that means OS entropy, a clock or entropy source (`catalogue.ENTROPY_SOURCES`), `torch.seed()`,
`torch.initial_seed()` after it, or a `random` / `np.random` draw made before they are seeded (not when it seeds an object in a function of a library
module: the scripts calling it seed the generator first).
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass
from typing import NamedTuple

from msprobe_rewriter import catalogue, conditions, pinning, project, seeding
from msprobe_rewriter.assignments import MAX_DEPTH, AssignmentTracer, Binding, CallSite, key, start
from msprobe_rewriter.context import (
    EVAL_NAME,
    NOT_CONSTANT,
    FileContext,
    argument,
    constant,
    draws_globally,
    keyword,
    unpacks,
)

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SEEDING_METHODS = frozenset({"manual_seed", "manual_seed_all", "seed"})  # `g.manual_seed(s)`, `rng.seed(s)`
CONFIG_SETUP_NAMES = frozenset(name.rpartition(".")[2] for name in catalogue.CONFIG_SEEDED_SETUPS)
CALLEE_NAMES = (frozenset(name.rpartition(".")[2] for name in (*catalogue.SEED_ARGUMENTS, *catalogue.ENTROPY_RESEEDERS))
                | SEEDING_METHODS | CONFIG_SETUP_NAMES)
# A call that may seed (`manual_seed(`, `set_seed(`, `default_rng(`, `default_setup(`, ...): the cheap pre-filter of
# `analyse`.
_CALL_NAMES = "|".join(sorted({name.rpartition(".")[2] for name in (*catalogue.GENERATOR_FACTORIES,
                                                                     *catalogue.SEEDS_FROM_ENTROPY_WITHOUT_ARGUMENT,
                                                                     *catalogue.SB3_ALGORITHMS)}
                               | CONFIG_SETUP_NAMES))
MAY_SEED = re.compile(rf"(?:seed\w*|{_CALL_NAMES})\s*\(")  # `manual_seed(` matches at `seed(`
FAMILY_NAMES = {"random": "Python's `random` generator", "numpy": "NumPy's global generator",
                "torch": "torch's default generator (which starts from OS entropy)"}
NUMBER_FUNCTIONS = frozenset({"int", "float", "len", "round", "abs", "ord", "sum", "min", "max"})
NUMBER_TYPES = frozenset({"int", "float", "bool", "complex"})  # parameters annotated so hold numbers
FIX = "every run seeds differently; use a fixed seed (log it if you want to vary it deliberately)"
DRAWS_FOR_NONE = ("`{name}` draws a seed from torch's unseeded generator when `{seed}` is None, and nothing here "
                  "gives `{seed}` a value (torchtune's configs ship `seed: null`): such runs seed differently every "
                  "time; set the seed in the config or on the command line (`seed=1234`)")
RESEEDS = ("`{name}()` reseeds the default generator from OS entropy: every run draws differently; seed it with a "
           "fixed value instead (`manual_seed(seed)`)")


class Origin(NamedTuple):
    """Where an entropy seed comes from: the node to name, and how to describe it."""

    node: ast.AST
    description: str
    where_called: bool = False  # entropy only if the call runs before the generator is seeded (decided by position)
    seeded_when: bool = False  # a seeding before the draw runs only when a condition false by default holds


NONE = Origin(ast.Constant(None), "None")  # a seed that is None with the default arguments


@dataclass(frozen=True)
class EntropySeed:
    """One finding of the entropy-seed rule."""

    node: ast.AST
    message: str
    on_eval_path: bool
    global_seed: bool  # the call seeds a default generator (what seed-missing looks for), not an object
    also: tuple[ast.Call, ...] = ()  # later seeding calls given the same seed (named in the message)
    salted_hash: bool = False  # the seed is `hash(...)` of a string or object: meant to vary with its argument
    origin: ast.AST | None = None  # where the varying value comes from (the call itself when it takes no seed)
    config_seeded: bool = False  # a library setup seeding from a config field (catalogue.CONFIG_SEEDED_SETUPS)
    seeded_when: bool = False  # fixed when an option seeds the generator first (seed-missing reports the condition)


_CACHE: weakref.WeakKeyDictionary[FileContext, list[EntropySeed]] = weakref.WeakKeyDictionary()


def analyse(ctx: FileContext) -> list[EntropySeed]:
    """Every seeding call of `ctx`'s file whose seed changes from run to run (computed once)."""
    found = _CACHE.get(ctx)
    if found is None:
        found = _CACHE[ctx] = _Tracer(ctx).findings() if MAY_SEED.search(ctx.source) else []
    return found


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    if len(text) > 40 and isinstance(node, ast.Call):
        return f"{ast.unparse(node.func)}(...)"
    return text


class _Tracer(AssignmentTracer):
    """The file's seeding-related calls, and the tracing of their seeds through its assignments."""

    def __init__(self, ctx: FileContext) -> None:
        self.calls: list[CallSite] = []
        self.reseeds: list[CallSite] = []
        self._function_scopes: dict[str | None, tuple | None] | None = None
        super().__init__(ctx, MAY_SEED)

    def note_call(self, call: CallSite) -> None:
        super().note_call(call)
        if self.ctx.callee_name(call.node) in CALLEE_NAMES or _named_like_seeder(call.node):
            self.calls.append(call)
            if reseeded_family(self.ctx, call.node) is not None:
                self.reseeds.append(call)

    def defaults(self, node: ast.expr) -> object:
        """The default of option `args.<dest>`, also where a project helper given the file's parser defines it."""
        if self._lookup is None:
            calls = [*(call.node for call in self.all_calls), *seeding.analyse(self.ctx).helper_options()]
            self._lookup = conditions.argparse_lookup(conditions.option_defaults(self.ctx.tree, calls))
        return self._lookup(node)

    def passed(self, name: str, binding: Binding) -> list[tuple[ast.expr, tuple]] | None:
        """What the calls of a function of the file pass for its parameter `name` (the calls that run with the
        default arguments; see `seeding.FileSeeding.live_calls`), read in the caller's scopes; a default is
        read where the function is defined."""
        function = binding.scopes[-1]
        facts = seeding.analyse(self.ctx)
        if not isinstance(function, FUNCTIONS) or facts.definitions.get(function.name) is not function:
            return None
        found = []
        for _, caller, call in facts.live_calls(function.name):
            argument = conditions.call_arguments(function, call).get(name)
            scopes = self._scopes_of(caller) if argument is not None and argument[1] else binding.scopes[:-1]
            if argument is None or scopes is None:
                return None
            found.append((argument[0], scopes))
        return found or None

    def _scopes_of(self, function: str | None) -> tuple | None:
        """The scopes inside the file's function `function` (module level for None); None when the name is
        defined more than once."""
        if self._function_scopes is None:
            self._function_scopes = {None: (self.ctx.tree,)}
            for bindings in self.bindings.values():
                for binding in bindings:
                    if isinstance(binding.definition, FUNCTIONS):
                        name = binding.definition.name
                        scopes = (*binding.scopes, binding.definition)
                        self._function_scopes[name] = None if name in self._function_scopes else scopes
        return self._function_scopes.get(function)

    # --- tracing seeds -----------------------------------------------------------------------
    def _origin(self, node: ast.expr, scopes) -> Origin | None:
        """Where the entropy in `node` comes from, `NONE` if it is None by default, or None if it is fixed."""
        if self._depth > MAX_DEPTH:
            return None
        self._depth += 1
        try:
            return self._origin_of(node, scopes)
        finally:
            self._depth -= 1

    def _origin_of(self, node: ast.expr, scopes) -> Origin | None:
        if constant(node) is None:
            return NONE
        if isinstance(node, (ast.Name, ast.Attribute)) and key(node) is not None:
            binding = self.latest(node, scopes)
            if binding is None and isinstance(node, ast.Attribute):
                return NONE if self.defaults(node) is None and not self._parameter_rooted(node, scopes) else None
            if binding and binding.value is None and isinstance(node, ast.Name) and binding.is_parameter:
                return self._passed_origin(node.id, binding)
            if not binding or binding.value is None:
                return None
            return self._origin(binding.value, binding.scopes)
        if isinstance(node, ast.Call):
            found = self._call_origin(node, scopes)
            if found is not None:
                return found
        if isinstance(node, ast.IfExp):
            truth = conditions.truth(node.test, lambda inner: self.known(inner, scopes))
            if truth is not None:
                return self._origin(node.body if truth else node.orelse, scopes)
            branches = [self._origin(node.body, scopes), self._origin(node.orelse, scopes)]
            return branches[0] if all(b not in (None, NONE) for b in branches) else None
        if isinstance(node, ast.BoolOp):
            return self._boolop_origin(node, scopes)
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Compare)):
            return None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                found = self._origin(child, scopes)
                if found is not None and found is not NONE:
                    return found
        return None

    def _passed_origin(self, name: str, binding: Binding) -> Origin | None:
        """A parameter's entropy: that of what every call of its function passes (`NONE` when each passes None)."""
        origins = [self._origin(expression, scopes) for expression, scopes in self.passed(name, binding) or ()]
        if not origins or None in origins or (NONE in origins and any(origin is not NONE for origin in origins)):
            return None
        return origins[0]

    def _parameter_rooted(self, node: ast.Attribute, scopes) -> bool:
        """`args.seed` where `args` is a parameter: its value is the caller's (who may have checked it)."""
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        binding = self.latest(root, scopes) if isinstance(root, ast.Name) else None
        return binding is False or (binding is not None and binding.is_parameter)

    def _boolop_origin(self, node: ast.BoolOp, scopes) -> Origin | None:
        """`args.seed or int(time.time())`: the operand that decides the value with the default arguments."""
        for operand in node.values[:-1]:
            truth = conditions.truth(operand, lambda inner: self.known(inner, scopes))
            if truth is None:
                return None
            if truth is isinstance(node.op, ast.Or):
                return self._origin(operand, scopes)
        return self._origin(node.values[-1], scopes)

    def _call_origin(self, call: ast.Call, scopes) -> Origin | None:
        qualified = self.ctx.imports.resolve_any(call.func) or self.ctx.draw_qualname(call)
        line = f"`{_text(call)}` (line {call.lineno})"
        if self._salted_hash(call, scopes):
            return Origin(call, f"{line}, a hash of a string or object, which Python salts afresh in every process")
        returned = self._returned_origin(call, scopes)
        if returned is not None:
            return Origin(call, f"{line}, which returns {returned.description}")
        if qualified in catalogue.ENTROPY_SOURCES:
            return Origin(call, f"{line}, {catalogue.ENTROPY_SOURCES[qualified]}")
        if reseeded_family(self.ctx, call) is not None:
            return Origin(call, f"{line}, which reseeds from OS entropy")
        if qualified in catalogue.INITIAL_SEED_READERS:
            reseed = self._reseeded_before(call, catalogue.INITIAL_SEED_READERS[qualified], scopes)
            return Origin(reseed, f"{line}, the OS-entropy seed `{_text(reseed)}` picked on line {reseed.lineno}") \
                if reseed is not None else None
        family = catalogue.ENTROPY_UNTIL_SEEDED_DRAWS.get(qualified)
        if family is not None and draws_globally(call, qualified) and not self._seeded_before(call, family):
            guard = self._seeded_before_when(call, family)
            if guard is not None:
                return Origin(call, f"{line}, a draw from {FAMILY_NAMES[family]}, which the file seeds first only "
                                    f"when `{ast.unparse(guard)}` (line {guard.lineno})", True, seeded_when=True)
            return Origin(call, f"{line}, a draw from {FAMILY_NAMES[family]} before it is seeded", where_called=True)
        if qualified in catalogue.SEEDS_DRAWN_FOR_NONE:
            return self._drawn_for_none(call, catalogue.SEEDS_DRAWN_FOR_NONE[qualified], line, scopes)
        return None

    def _drawn_for_none(self, call: ast.Call, spec: tuple[int, str], line: str, scopes) -> Origin | None:
        """OpenMMLab's `init_random_seed(args.seed)`: the seed it returns is drawn from NumPy's global generator when
        the one given is None, as an option without a default is."""
        seed = argument(call, *spec)
        if seed is not None and self._origin(seed, scopes) is not NONE or self._seeded_before(call, "numpy"):
            return None
        given = f"`{_text(seed)}` is None with the default arguments" if seed is not None else "it is given no seed"
        return Origin(call, f"{line}, which draws one from {FAMILY_NAMES['numpy']}, unseeded there, because {given}",
                      where_called=True)

    def _seeds_object_in_library(self, node: ast.Call, scopes) -> bool:
        """An object's seeding (`dataset.set_seed(seed)`) in a function of a library module (one other files of the
        project import), given a draw from a global generator: the scripts calling the function seed that generator
        first, so the draw is fixed then (sd-scripts' `config_util.generate_dataset_group_by_blueprint`)."""
        return (isinstance(node.func, ast.Attribute) and not pinning.names_a_function(self.ctx.imports.bindings, node)
                and any(isinstance(scope, FUNCTIONS) for scope in scopes) and project.imported_elsewhere(self.ctx.path))

    def _returned_origin(self, call: ast.Call, scopes) -> Origin | None:
        """The entropy a call of a function defined in this file returns, when every `return` of it has some."""
        binding = self.latest(call.func, scopes) if isinstance(call.func, ast.Name) else None
        function = binding.definition if binding else None
        if not isinstance(function, FUNCTIONS) or self._depth > MAX_DEPTH:
            return None
        inner = (*binding.scopes, function)
        origins = [self._origin(value, inner) for value in _returned_values(function)]
        if not origins or any(origin is None or origin is NONE or origin.where_called for origin in origins):
            return None  # a draw inside the function: whether it runs before seeding depends on the caller
        return origins[0]

    def _salted_hash(self, call: ast.Call, scopes) -> bool:
        """`hash(x)` of the builtin where x is not known to be a number: str and bytes hashes are salted per
        process (PYTHONHASHSEED) and an object's default hash is its address, so only numbers hash alike."""
        return (_is_hash(call) and len(call.args) == 1 and not call.keywords
                and self.latest(call.func, scopes) is None and not self._numeric(call.args[0], scopes))

    def _numeric(self, node: ast.expr, scopes) -> bool:
        """Whether `node` is known to be a number or a tuple of numbers (whose hashes never change)."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float, complex))
        if isinstance(node, ast.UnaryOp):
            return self._numeric(node.operand, scopes)
        if isinstance(node, ast.BinOp):
            return self._numeric(node.left, scopes) and self._numeric(node.right, scopes)
        if isinstance(node, ast.Tuple):
            return all(self._numeric(element, scopes) for element in node.elts)
        if isinstance(node, ast.Call):
            return isinstance(node.func, ast.Name) and node.func.id in NUMBER_FUNCTIONS
        binding = self.latest(node, scopes) if isinstance(node, (ast.Name, ast.Attribute)) else False
        if binding and binding.value is None:  # a parameter (`seed: int`), a loop variable, ...
            return _number_annotation(binding.annotation)
        if not binding or self._depth > MAX_DEPTH:
            return False
        self._depth += 1
        try:
            return self._numeric(binding.value, binding.scopes)
        finally:
            self._depth -= 1

    def _reseeded_before(self, call: ast.Call, family: str, scopes) -> ast.Call | None:
        """The reseeding call (`torch.seed()`) whose seed `call` reads back, if the default run makes one."""
        function = next((s.name for s in reversed(scopes) if isinstance(s, FUNCTIONS)), None)
        facts = seeding.analyse(self.ctx)
        if function in facts.worker_init:
            return None  # inside a DataLoader worker it reads the per-worker seed, derived from the base seed
        events = [(start(r.node), r.node) for r in self.reseeds
                  if reseeded_family(self.ctx, r.node) == family
                  and self.runs(r.guards, r.scopes) is not False]
        events += [(start(e.node), None) for e in facts.effects
                   if family in e.summary.families and facts.skipping_guard(e) is None]
        earlier = [event for event in events if event[0] < start(call)]
        return max(earlier, key=lambda event: event[0])[1] if earlier else None

    def _seeded_before(self, node: ast.AST, family: str) -> bool:
        facts = seeding.analyse(self.ctx)
        return any(family in e.summary.families and start(e.node) < start(node) and facts.skipping_guard(e) is None
                   for e in facts.effects)

    def _seeded_before_when(self, node: ast.AST, family: str) -> ast.expr | None:
        """The condition, false with the default arguments, under which the file seeds `family` before `node`
        (k-diffusion's `if args.seed is not None: torch.manual_seed(...)`): the draw is fixed when it holds."""
        facts = seeding.analyse(self.ctx)
        return next((guard for e in facts.effects if family in e.summary.families and start(e.node) < start(node)
                     for guard in [facts.skipping_guard(e)] if guard is not None and hasattr(guard, "lineno")), None)

    # --- findings ----------------------------------------------------------------------------
    def findings(self) -> list[EntropySeed]:
        """One finding per entropy origin, at the first seeding call it reaches."""
        found: dict[int, tuple[CallSite, str, bool, list[ast.Call], bool, Origin]] = {}
        facts = seeding.analyse(self.ctx)
        for call in self.calls:
            node = call.node
            if self.runs(call.guards, call.scopes) is False or facts.skips(node) or _implements_reseeder(call.scopes):
                continue
            qualified = self.ctx.imports.resolve_any(node.func) or seeding.method_qualname(self.ctx, node)
            problem = self._problem(node, qualified, call.scopes)
            if problem is None:
                continue
            origin, message = problem
            if origin.where_called and self._seeds_object_in_library(node, call.scopes):
                continue
            on_object = qualified not in catalogue.SEED_ARGUMENTS and getattr(node.func, "attr", "") in SEEDING_METHODS
            global_seed = qualified not in catalogue.GENERATOR_FACTORIES and not on_object  # `g.manual_seed(s)`
            if id(origin.node) in found:
                found[id(origin.node)][3].append(node)
            else:
                found[id(origin.node)] = (call, message, global_seed, [], _is_hash(origin.node), origin)
        for reseed in self.reseeds:
            if id(reseed.node) not in found and self.runs(reseed.guards, reseed.scopes) is not False:
                name = ast.unparse(reseed.node.func)
                found[id(reseed.node)] = (reseed, RESEEDS.format(name=name), True, [], False,
                                         Origin(reseed.node, ""))
        results = []
        for call, message, global_seed, also, salted_hash, origin in found.values():
            if also:
                lines = sorted({other.lineno for other in also})
                message += f" (the same seed is passed on line {', '.join(map(str, lines))})"
            config_seeded = self.ctx.imports.resolve_any(call.node.func) in catalogue.CONFIG_SEEDED_SETUPS
            results.append(EntropySeed(call.node, message, self._on_eval_path(call), global_seed, tuple(also),
                                       salted_hash, origin.node, config_seeded, origin.seeded_when))
        return sorted(results, key=lambda f: start(f.node))

    def _problem(self, node: ast.Call, qualified: str | None, scopes) -> tuple[Origin, str] | None:
        """The origin of the seed of a seeding call and the message, if the seed changes every run."""
        if qualified in catalogue.CONFIG_SEEDED_SETUPS:
            return self._config_seed_problem(node, catalogue.CONFIG_SEEDED_SETUPS[qualified])
        if qualified in catalogue.SEED_ARGUMENTS:
            seed = argument(node, *catalogue.SEED_ARGUMENTS[qualified])
        elif qualified in catalogue.ENTROPY_RESEEDERS:
            return None
        elif isinstance(node.func, ast.Attribute) and node.func.attr in SEEDING_METHODS or _named_like_seeder(node):
            seed = argument(node, 0, "seed")
            if seed is None:
                return None  # a bare `g.seed()` is unseeded-generator's, a helper's own default is unknown
        else:
            return None
        name = ast.unparse(node.func)
        draws_for_none = qualified in catalogue.SEEDERS_DRAWING_FOR_NONE
        entropy_when_none = qualified in catalogue.SEEDS_FROM_ENTROPY_WITHOUT_ARGUMENT or draws_for_none
        source = catalogue.SEEDS_FROM_ENTROPY_WITHOUT_ARGUMENT.get(qualified, "OS entropy")
        if seed is None:
            if draws_for_none or entropy_when_none and not unpacks(node):
                given = "(...)" if node.args or node.keywords else "()"
                position, keyword_name = catalogue.SEED_ARGUMENTS.get(qualified, (0, ""))
                hint = f"; pass `{keyword_name}=`" if position is None else ""  # Composer's keyword-only `seed=`
                return Origin(node, ""), f"`{name}{given}` without a seed seeds from {source}: {FIX}{hint}"
            return None
        origin = self._origin(seed, scopes)
        if origin is None:
            if draws_for_none and self._unknown_option(seed, scopes):
                return Origin(node, ""), DRAWS_FOR_NONE.format(name=name, seed=ast.unparse(seed))
            return None
        if origin is NONE:
            if not entropy_when_none:
                return None  # None is an error there (torch, MindSpore) or unseeded-generator's finding
            if constant(seed) is not NOT_CONSTANT:
                return Origin(node, ""), f"`{name}({'seed=' if keyword(node, 'seed') else ''}None)` seeds from {source}: {FIX}"
            binding = self.latest(seed, scopes) if isinstance(seed, ast.Name) else None
            if binding and binding.is_parameter:
                function = binding.scopes[-1].name
                lines = ", ".join(str(site[2].lineno) for site in seeding.analyse(self.ctx).live_calls(function))
                return Origin(node, ""), (f"the seed `{seed.id}` is None in every call of `{function}` (line {lines}), "
                                          f"so `{name}` seeds from {source}: {FIX}; pass a seed")
            return Origin(node, ""), (f"the seed `{ast.unparse(seed)}` is None with the default arguments, so "
                                      f"`{name}` seeds from {source}: {FIX}; give the seed option a default")
        return origin, f"the seed comes from {origin.description}: {'without it, ' * origin.seeded_when}{FIX}"

    def _unknown_option(self, seed: ast.expr, scopes) -> bool:
        """`cfg.seed` of a parameter `cfg`: an option or config field the file never assigns and whose default it
        does not show (not a class's constant, `TestConfig.SEED`)."""
        return (isinstance(seed, ast.Attribute) and not self.latest(seed, scopes)
                and self._parameter_rooted(seed, scopes) and self.defaults(seed) is conditions.UNKNOWN)

    def _config_seed_problem(self, node: ast.Call, fields: tuple[str, ...]) -> tuple[Origin, str] | None:
        """A setup seeding from a config field whose default means OS entropy: a problem unless the file sets the
        field (`cfg.SEED = 42`, `cfg.merge_from_list(["SEED", 42])`, `"train.seed=42"` overrides). A config file
        or the command line may set it too, which the file does not show: the message says so."""
        if _sets_config_field(self.ctx.tree, fields):
            return None
        name = ast.unparse(node.func)
        shown = " or ".join(fields)
        return Origin(node, ""), (f"`{name}` seeds every generator from the config's {shown}, -1 unless a config file or "
                                  f"the command line sets it, and then from the OS: every run seeds differently; set "
                                  f"`cfg.{fields[0]} = 1234` (`cfg.{fields[-1]}`) before the call and before the config is "
                                  "frozen, or set it in the config file")

    def _on_eval_path(self, call: CallSite) -> bool:
        return self.ctx.eval_file or any(isinstance(s, FUNCTIONS) and EVAL_NAME.search(s.name) for s in call.scopes)


def _sets_config_field(tree: ast.Module, fields: tuple[str, ...]) -> bool:
    """Whether the file assigns one of the dotted config `fields` (`cfg.SEED = ...`, `cfg.train.seed = ...`), or names
    it in an override (`"SEED"` in a merge list, `"train.seed=..."`)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Attribute) and any(ast.unparse(target).endswith("." + field) for field in fields)
                   for target in targets):
                return True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if any(node.value == field or node.value.startswith(field + "=") for field in fields):
                return True
    return False


def reseeded_family(ctx: FileContext, call: ast.Call) -> str | None:
    """The generator family a call reseeds from OS entropy: `torch.seed()`, `torch.cuda.seed()`, ..., or a default
    generator's own bare `.seed()` (`torch.cuda.default_generators[i].seed()`); else None."""
    family = catalogue.ENTROPY_RESEEDERS.get(ctx.imports.resolve_any(call.func) or "")
    func = call.func
    if family is not None or not (isinstance(func, ast.Attribute) and func.attr == "seed") or call.args or call.keywords:
        return family
    receiver = func.value.value if isinstance(func.value, ast.Subscript) else func.value
    return catalogue.DEFAULT_GENERATORS.get(ctx.imports.resolve_any(receiver) or "")


def _returned_values(function: ast.AST) -> list[ast.expr]:
    """The values of a function's own `return` statements (not those of functions nested in it); a bare
    `return` or falling off the end returns None, which is not entropy."""
    returns, todo = [], list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            returns.append(node)
        elif not isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
            todo += [child for child in ast.iter_child_nodes(node) if isinstance(child, (ast.stmt, ast.excepthandler,
                                                                                          ast.match_case))]
    return [node.value if node.value is not None else ast.Constant(None) for node in sorted(returns, key=start)]


def _number_annotation(annotation: ast.expr | None) -> bool:
    """`int`, `float`, `bool` or `complex` (also as a string)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value in NUMBER_TYPES
    return isinstance(annotation, ast.Name) and annotation.id in NUMBER_TYPES


def _is_hash(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hash"


def _implements_reseeder(scopes: tuple[ast.AST, ...]) -> bool:
    """Inside a function named `seed` (a `Generator.seed()` of a torch-like library): drawing a fresh seed is
    its contract, like `torch.seed()`'s; its callers are judged instead."""
    return isinstance(scopes[-1], FUNCTIONS) and scopes[-1].name in catalogue.RESEEDER_FUNCTION_NAMES


def _named_like_seeder(call: ast.Call) -> bool:
    """A call of a function we cannot see into whose name says it seeds (`set_seed(s)`, `utils.init_seeds(s)`)."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return bool(pinning.SEEDER_NAME.search(name)) and not pinning.NOT_SEEDER.search(name) \
        and name not in SEEDING_METHODS

