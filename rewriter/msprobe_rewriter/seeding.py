"""What a linted file does to pin its randomness, and whether it needs to: the query API of the seeding
and determinism rules (and of the seed codemod).

One lazy pass per file, after the engine's traversal, finds every call or assignment that seeds a
generator family, switches deterministic kernels on or sets HCCL_DETERMINISTIC (see `pinning`), with
the `if` conditions around it, so "seeds only when --seed is given" can be told apart from "seeds".
Calls into project-local helpers are followed only when a question needs them (`effects`,
`families()`, `default_run` when the file's own statements do not settle it): reading other files
costs more than the rest of the analysis.
"""

from __future__ import annotations

import ast
import re
import weakref
from collections import Counter
from collections.abc import Callable, Container
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from msprobe_rewriter import catalogue, conditions, pinning, project
from msprobe_rewriter.assignments import is_main_guard
from msprobe_rewriter.context import (
    EVAL_NAME,
    FUNCTION_TYPES,
    NOT_CONSTANT,
    FileContext,
    argument,
    constant,
    keyword,
    target_name,
    walk_scope,
)
from msprobe_rewriter.pinning import NOTHING, Summary

# What makes a script's randomness matter: it trains, or it samples (draws from torch's generator) from
# weights it loads. Draws alone (dummy inputs of a smoke test, fake data of a demo) do not, nor do draws in a
# function that exports a model (example inputs to trace it with: icefall's export-onnx.py).
SAMPLING_DRAWS = catalogue.TORCH_RANDOM_DRAWS
# Methods of a project's objects that sample (guided diffusion's `diffusion.p_sample_loop(model, shape)`, latent
# diffusion's `DDIMSampler.sample(...)`): they draw their noise in project code the file does not show.
TRAINING_METHOD = re.compile(r"train(?:_|$)")  # `train`, `train_epoch`, `train_iters`, `train_one_epoch`
SAMPLING_METHOD = re.compile(r"sample$|\w*sample_loop(?:_progressive)?$|(?:p|ddim|ddpm|plms)_sample$")
MODEL_EXPORTS = frozenset({"torch.onnx.export", "torch.onnx.dynamo_export", "torch.jit.trace", "torch.jit.trace_module",
                           "torch.export.export", "torch.export.export_for_training"})
WEIGHT_LOADERS = frozenset({"torch.load"}) | catalogue.MINDSPORE_LOAD_CHECKPOINT | catalogue.MINDSPORE_LOAD_PARAM
WEIGHT_LOADING_METHODS = frozenset({"load_state_dict", "from_pretrained", "load_from_checkpoint"})
# Libraries outside the known ones whose calls train: mindformers' Trainer (which seeds only from a config's truthy
# seed, and not in (semi-)auto parallel mode), OpenMMLab 1.x's `train_detector(...)` and the like.
LIBRARY_TRAINING = catalogue.MINDFORMERS_TRAINERS | catalogue.OPENMMLAB_TRAIN_APIS
MAX_TRAINING_FILES = 3  # training steps are followed through at most this many project files
Guard = conditions.Guard
Located = tuple[ast.AST, tuple[Guard, ...], "str | None"]  # a node, the `if` tests around it, its function
CallSite = tuple[tuple[Guard, ...], "str | None", ast.Call]  # a call's `if` tests, the function it is in, the call
Trusted = Callable[[Summary], bool]  # what a training module must pin to be trusted with it (see `_training_names`)
Pinned = list[tuple[Summary, "ast.expr | None"]]  # what a call pins, each with the argument that must be true for it


def seeds(summary: Summary) -> bool:
    """Trust for the seeding rules: a training module that seeds a generator family."""
    return bool(summary.families)


def switches_on(summary: Summary) -> bool:
    """Trust for the determinism rule: a training module that switches deterministic kernels on."""
    return summary.deterministic or summary.cudnn


@dataclass(frozen=True)
class Effect:
    """One statement of the linted file that pins something, with the conditions around it."""

    node: ast.AST
    summary: Summary
    guards: tuple[Guard, ...]
    function: str | None


class Verdict(NamedTuple):
    """Whether something is pinned in the default run; if not, the condition that skips the first place
    that would pin it (None: nothing would)."""

    pinned: bool
    skipped_by: ast.expr | None


@dataclass
class FileSeeding:
    """Everything the seeding rules ask about one file."""

    calls: list[ast.Call]
    trains: bool  # runs training steps, builds an optimizer or a trainer
    follow: Callable[[ast.AST], Pinned]  # what a call into a project-local helper (or an import of one) pins
    # the project-local modules it trains through, those that pin what `Trusted` accepts left out (read lazily)
    trains_elsewhere: Callable[[Trusted], list[project.Module]]
    option_helpers: Callable[[], list[ast.Call]] = list  # the calls of project helpers given its parser (read lazily)
    config_classes: Callable[[], list[ast.ClassDef]] = list  # the project's classes its parameters are annotated with
    direct: list[Effect] = field(default_factory=list)  # effects the catalogue knows, in source order
    helper_calls: list[Located] = field(default_factory=list)  # calls and imports `follow` may resolve
    creators: dict[int, ast.Call] = field(default_factory=dict)  # id of a method call -> the call that made its object
    # function -> what a statement of it pins beyond it (see pinning.outliving)
    outliving: dict[str, Callable[[ast.AST, Summary], Summary]] = field(default_factory=dict)
    drawing: set[str | None] = field(default_factory=set)  # the functions drawing from torch's generator (None: module level)
    generating: list[tuple[str | None, ast.expr]] = field(default_factory=list)  # `generate(do_sample=...)`: function, switch
    exporting: set[str | None] = field(default_factory=set)  # the functions exporting a model
    loads_weights: bool = False
    worker_init: set[str] = field(default_factory=set)  # functions passed as `worker_init_fn`
    # function of the file -> the places that call it by name (their guards, the calling function, the call)
    local_calls: dict[str, list[CallSite]] = field(default_factory=dict)
    definitions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)  # of local_calls' functions
    assigned_attributes: frozenset[str] = frozenset()  # attribute names the file assigns to (`args.seed = ...`)
    tree: ast.Module | None = None  # the file's, for the options its dataclasses declare
    library_defaults: dict[str, object] = field(default_factory=dict)  # of the library arguments it reads
    spawned: list[tuple[ast.Call, str]] = field(default_factory=list)  # (mp.spawn call, the file's function it starts)
    _lookup: conditions.Lookup | None = None
    _declared: frozenset[str] = frozenset()  # the options `lookup` knows, whatever their defaults
    _skipped: dict[str, ast.expr | None] = field(default_factory=dict)  # function -> what skips all its calls
    _in_workers: dict[str, bool] = field(default_factory=dict)  # function -> whether spawned processes run it
    _effects: list[Effect] | None = None
    _training_modules: dict[Trusted, list[project.Module]] = field(default_factory=dict)
    _helper_options: list[ast.Call] | None = None

    def lookup(self, node: ast.expr) -> object:
        """Default value of `args.<dest>` from the file's argparse definitions (or its dataclasses' fields, which
        tyro and `HfArgumentParser` parse, and those of the project's dataclasses its functions' parameters are
        annotated with, lerobot's `def train(cfg: TrainPipelineConfig)`); unknown for an option the file
        assigns to (`if args.seed is None: args.seed = 42`), and for every option when it overlays them all
        (`vars(args).update(config)`)."""
        if self._lookup is None:
            project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
            configs = conditions.dataclass_defaults(ast.Module(body=self.config_classes(), type_ignores=[]))
            defaults = {**self.library_defaults, **configs,
                        **conditions.option_defaults(self.tree, [*self.calls, *self.helper_options()])}
            for dest in self.assigned_attributes & defaults.keys():
                defaults[dest] = conditions.UNKNOWN
            if any(conditions.overlays_options(call) for call in self.calls):
                defaults = {}  # `vars(args).update(config)`: any option may be overwritten
            self._declared = frozenset(defaults)
            self._lookup = conditions.argparse_lookup(defaults)
        return self._lookup(node)

    def helper_options(self) -> list[ast.Call]:
        """The calls in the project functions the file passes its argparse parser to (sd-scripts'
        `train_util.add_training_arguments(parser, True)`), whose `add_argument`s define the file's options
        (found once)."""
        if self._helper_options is None:
            project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
            self._helper_options = self.option_helpers()
        return self._helper_options

    @property
    def effects(self) -> list[Effect]:
        """Every effect in source order, calls into project-local helpers and what project modules pin when
        imported included (followed once)."""
        if self._effects is None:
            project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
            followed = []
            for call, guards, function in self.helper_calls:
                for pinned, switch in self.follow(call):
                    summary = self.left(function, call, pinned)
                    if summary != NOTHING:
                        extra = ((switch, True),) if switch is not None else ()
                        followed.append(Effect(call, summary, guards + extra, function))
            self._effects = sorted(self.direct + followed, key=lambda e: (e.node.lineno, e.node.col_offset))
        return self._effects

    def training_calls(self) -> list[tuple[ast.Call, ast.expr | None]]:
        """The calls among `helper_calls` outside evaluation code, each with the condition that keeps it from running
        with the default arguments (None: it runs)."""
        return [(call, self._false_guard(guards) or self._skipped_function(function))
                for call, guards, function in self.helper_calls if isinstance(call, ast.Call) and not _is_eval(function)]

    def left(self, function: str | None, node: ast.AST, summary: Summary) -> Summary:
        """What `node`, a statement of `function` (None: module level), pins beyond that function."""
        return self.outliving[function](node, summary) if function in self.outliving else summary

    @property
    def random_work(self) -> bool:
        """Whether the file's randomness matters to its seeding: see `needs`."""
        return self.needs(seeds)

    def needs(self, trusted: Trusted) -> bool:
        """Whether the file's randomness matters: it trains (itself, or through project code it calls that does
        not pin what `trusted` accepts), or samples from weights it loads."""
        return self.trains or (self.samples and self.loads_weights) or bool(self.generates - self.exporting) \
            or bool(self.training_modules(trusted))

    @property
    def samples(self) -> bool:
        """Whether the file draws from torch's generator other than for a model export's example inputs."""
        return bool((self.drawing | self.generates) - self.exporting)

    @property
    def generates(self) -> set[str | None]:
        """The functions sampling text with transformers' `generate(do_sample=...)`, true with the default
        arguments: they sample from trained weights, whatever loads them."""
        return {function for function, switch in self.generating if conditions.truth(switch, self.lookup)}

    def training_modules(self, trusted: Trusted) -> list[project.Module]:
        """The project-local modules whose training code the file calls (improved-diffusion's `train_util`
        for `TrainLoop(...).run_loop()`), but for those that pin what `trusted` accepts, found once."""
        if trusted not in self._training_modules:
            project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
            self._training_modules[trusted] = self.trains_elsewhere(trusted)
        return self._training_modules[trusted]

    def skipping_guard(self, effect: Effect) -> ast.expr | None:
        """The condition that keeps `effect` from running with the default arguments, if any: one around it,
        or, in a function of the file, one around every call of that function."""
        return (self._false_guard(effect.guards) or self._skipped_function(effect.function)
                or self._skipped_by_arguments(effect))

    def skips(self, node: ast.AST) -> bool:
        """Whether the default run never runs `node`, a statement of the file that pins something."""
        effects = [effect for effect in self.direct if effect.node is node]
        return bool(effects) and all(self.skipping_guard(effect) is not None for effect in effects)

    def _false_guard(self, guards: tuple[Guard, ...], lookup: conditions.Lookup | None = None) -> ast.expr | None:
        for test, wanted in guards:
            if conditions.truth(test, lookup or self.lookup) is (not wanted):
                return conditions.holding((test, wanted))
        return None

    def live_calls(self, function: str) -> list[CallSite]:
        """The calls of the file's function `function` that run with the default arguments (none when its
        callers are not known: see `local_calls`)."""
        return [site for site in self.local_calls.get(function, ())
                if not (self._false_guard(site[0]) or self._skipped_function(site[1]))]

    def _skipped_by_arguments(self, effect: Effect) -> ast.expr | None:
        """A condition around `effect`, in a function of the file, that is false in every call of the function
        with what that call passes: `if seed is not None:` in `def set_seed(seed=None)`, called only as
        `set_seed(args.seed)` where `--seed` has no default."""
        definition = self.definitions.get(effect.function)
        if definition is None or not effect.guards:
            return None
        skipped_by = None
        for _, _, call in self.live_calls(effect.function):
            values = dict(conditions.bind_arguments(definition, call, self.lookup))
            guard = self._false_guard(effect.guards, conditions.parameter_lookup(values, self.lookup))
            if guard is None:
                return None
            skipped_by = skipped_by or guard
        return skipped_by

    def _skipped_function(self, function: str | None) -> ast.expr | None:
        """The condition that keeps every call of the file's function `function` from running by default; None
        when one runs, or when the function is also used otherwise (passed as a callback, called as a method).
        Computed once per function; calls in a cycle count as running."""
        if function is None or function in self._skipped:
            return self._skipped.get(function)
        self._skipped[function] = None
        skipped_by = None
        for guards, caller, _ in self.local_calls.get(function, ()):
            guard = self._false_guard(guards) or self._skipped_function(caller)
            if guard is None:
                skipped_by = None
                break
            skipped_by = skipped_by or guard
        self._skipped[function] = skipped_by
        return skipped_by

    def runs_in_workers(self, effect: Effect) -> bool:
        """Whether `effect` also runs in the processes the file spawns: at module level outside the `__main__`
        block (they re-import the file), or in a function they run (the one spawned and the functions of the file
        it calls); a function whose callers are not known counts."""
        if effect.function is None:
            return not any(is_main_guard(test) for test, _ in effect.guards)
        return self._runs_in_workers(effect.function)

    def _runs_in_workers(self, function: str | None) -> bool:
        if function is None:
            return False
        if function not in self._in_workers:
            self._in_workers[function] = False  # calls in a cycle add nothing
            self._in_workers[function] = (
                function not in self.local_calls or any(function == target for _, target in self.spawned)
                or any(caller is None and not any(is_main_guard(test) for test, _ in guards)
                       or self._runs_in_workers(caller) for guards, caller, _ in self.local_calls[function]))
        return self._in_workers[function]

    def families(self) -> frozenset[str]:
        """Every generator family seeded anywhere in the file (under any condition)."""
        found: frozenset[str] = frozenset()
        for effect in self.effects:
            found |= effect.summary.families
        return found

    def default_run(self, wanted: Callable[[Effect], bool]) -> Verdict:
        """Whether an effect `wanted` accepts runs with the default arguments. Project helpers are followed
        only when the file's own statements do not settle it."""
        for with_helpers in (False, True):
            matching = [effect for effect in (self.effects if with_helpers else self.direct) if wanted(effect)]
            guards = [self.skipping_guard(effect) for effect in matching]
            if any(guard is None for guard in guards):
                return Verdict(True, None)
        return Verdict(False, guards[0] if guards else None)

    def unsure_run(self, wanted: Callable[[Effect], bool]) -> tuple[Effect, ast.expr | None] | None:
        """When every effect `wanted` accepts that runs with the default arguments seeds only if a value the code
        tests for None is set (`if cfg.seed is not None:` around it, or in the project helper it calls:
        mindediting's `init_env(cfg)`, see `Summary.unsure`), which may be None as far as the file tells (see
        `maybe_none`): the first of them, with the test around it in the file (None: the test is in the helper).
        None when one seeds whatever those values hold, or none runs. Project helpers are followed only when the
        file's own statements do not settle it."""
        for with_helpers in (False, True):
            running = [effect for effect in (self.effects if with_helpers else self.direct)
                       if wanted(effect) and self.skipping_guard(effect) is None]
            if any(self._none_guard(effect) is None and (effect.summary.sure or not self.unsure_inside(effect))
                   for effect in running):
                return None
        return (running[0], self._none_guard(running[0])) if running else None

    def opt_in_run(self, wanted: Callable[[Effect], bool]) -> tuple[Effect, ast.expr | None] | None:
        """When every effect `wanted` accepts that runs with the default arguments does so only under a determinism
        flag whose value nothing here tells (`if cfg.deterministic:`; or in the project helper it calls, OpenRLHF's
        `strategy.setup_distributed()`, see `Summary.opt_in`): the first of them, with the flag in the file (None:
        the flag is in the helper). None when one runs whatever the flags hold, or none runs. Project helpers are
        followed only when the file's own statements do not settle it."""
        for with_helpers in (False, True):
            running = [effect for effect in (self.effects if with_helpers else self.direct)
                       if wanted(effect) and self.skipping_guard(effect) is None]
            if any(self._opt_in_flag(effect) is None
                   and wanted(replace(effect, summary=effect.summary.without_opt_in())) for effect in running):
                return None
        return (running[0], self._opt_in_flag(running[0])) if running else None

    def _opt_in_flag(self, effect: Effect) -> ast.expr | None:
        """The determinism flag of unknown value (`conditions.determinism_flag`) that a condition around `effect` in
        the file needs, if any; in a function of the file, unknown with what every call of it passes too."""
        definition = self.definitions.get(effect.function)
        lookups = [conditions.parameter_lookup(dict(conditions.bind_arguments(definition, call, self.lookup)),
                                               self.lookup) for _, _, call in self.live_calls(effect.function)
                   ] if definition is not None else []
        for guard in effect.guards:
            flags = [conditions.determinism_flag(guard, lookup) for lookup in lookups or [self.lookup]]
            if all(flag is not None for flag in flags):
                return flags[0]
        return None

    def maybe_none(self, test: ast.expr) -> bool:
        """Whether `test` compares with None a value read from an object (`conditions.none_tested`) that the
        defaults do not tell and that is no option the file declares (a required option is never None)."""
        subject = conditions.none_tested(test)
        return subject is not None and conditions.value(subject, self.lookup) is conditions.UNKNOWN \
            and subject.attr not in self._declared

    def _none_guard(self, effect: Effect) -> ast.expr | None:
        """The condition around `effect` in the file that tests for None a value that may be None, if any."""
        guard = next((guard for guard in effect.guards if self.maybe_none(guard[0])), None)
        return conditions.holding(guard) if guard is not None else None

    def unsure_inside(self, effect: Effect) -> bool:
        """Whether the project helper `effect` calls seeds only under a test for None of a value that may be None
        here too (the file's options, read by name, may tell it: `args.seed` with `--seed` 42 by default)."""
        when = effect.summary.unsure_when
        return when is not None and self.maybe_none(when[0])


_CACHE: weakref.WeakKeyDictionary[FileContext, FileSeeding] = weakref.WeakKeyDictionary()


def analyse(ctx: FileContext) -> FileSeeding:
    """The seeding facts of `ctx`'s file (computed once, after the traversal)."""
    found = _CACHE.get(ctx)
    if found is None:
        found = _CACHE[ctx] = _analyse(ctx)
    return found


def _analyse(ctx: FileContext) -> FileSeeding:
    nodes = list(conditions.walk([ctx.tree], pinning.WALKED))
    defined = {node.name for node, _, _ in nodes if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    local = project.local_imports(node for node, _, _ in nodes)
    folder = project.file_folder(ctx.path)


    def follow(call: ast.AST) -> Pinned:
        """What a helper call pins; a determinism switch it is given as an option (`deterministic=args.deterministic`)
        apart, with that option as its condition."""
        if isinstance(call, (ast.Import, ast.ImportFrom)):
            return [(pinning.import_summary(call, folder), None)]
        switch = _determinism_option(call)
        if switch is None:
            return [(pinned(call, seeding.lookup), None)]
        off, on = (pinned(call, _assuming(switch, value, seeding.lookup)) for value in (False, True))
        return [(off, None), (_switched(off, on), switch)]

    def pinned(call: ast.Call, lookup: conditions.Lookup) -> Summary:
        creator = creators.get(id(call))
        found = pinning.method_summary(creator, call, folder, local, defined, lookup) if creator else None
        if found is None and id(call) in supers:
            found = pinning.super_summary(project.file_module(ctx.path, ctx.tree, ctx.imports), supers[id(call)],
                                          call, lookup)
        if found is None:
            found = pinning.helper_summary(call, folder, local, defined, lookup)
        if found is not None:
            return found
        if _is_local_def(call, defined) or not pinning.names_a_function(ctx.imports.bindings, call):
            return NOTHING
        return _by_name(call, lookup)

    def trains_elsewhere(trusted: Trusted) -> list[project.Module]:
        """The project modules whose training the file runs (from calls that run with the default arguments, and
        project functions these are given to run: fairseq's `call_main(cfg, main)`); an
        evaluation script (`eval.py`) that only builds a training class (Wide&Deep's eval.py builds its TrainStepWrap for `Model(train_net).eval(...)`) runs none,
        nor does a training object built as another call's argument (nanotron's `ParallelismArgs(pp_engine=
        OneForwardOneBackwardPipelineEngine())` in run_generate.py): what receives it runs it, if anything."""
        live = [(node, function) for node, guards, function in nodes if isinstance(node, ast.Call)
                and not _is_eval(function) and seeding._false_guard(guards) is None]  # not `elif opt.profile:` off
        handed = _handed_over(live, local, _bound_names(ctx.tree))
        arguments = {id(arg) for call, _ in live for arg in (*call.args, *(k.value for k in call.keywords))}
        inherited = _inherited(ctx.tree, [call for call, _ in live if id(call) not in arguments])
        found = [module for call, name, module in project.reached([*(c for c, _ in live), *handed, *inherited], local,
                                                                   defined, folder)
                 if name in _training_names(module, trusted) and (call not in handed or name in module.functions)
                 and not ((ctx.eval_file or id(call) in arguments)
                          and (module.classes_built(name) or project.registered_classes(module, name)))]
        called = {call.func.id for call, _ in live if isinstance(call.func, ast.Name)}
        factories = sorted(node.name for node in ctx.tree.body if isinstance(node, FUNCTION_TYPES)
                           and node.name in called and project.registry_lookups(node))
        own = project.file_module(ctx.path, ctx.tree, ctx.imports)
        return found + [other for name in factories if not ctx.eval_file  # LAVIS' `get_runner_class(cfg)(...)`
                        for other, cls in project.registered_classes(own, name) if cls.name in _training_names(other, trusted)]

    def option_helpers() -> list[ast.Call]:
        given = _given_parser(ctx, [node for node, _, _ in nodes if isinstance(node, ast.Call)])
        return [node for _, name, module in project.reached(given, local, defined, folder)
                if name in module.functions for node in ast.walk(module.functions[name]) if isinstance(node, ast.Call)]

    def config_classes() -> list[ast.ClassDef]:
        """The project's classes that the file's functions annotate a parameter with (`cfg: TrainPipelineConfig`)."""
        annotations = [ast.Call(func=arg.annotation, args=[], keywords=[]) for node, _, _ in nodes
                       if isinstance(node, FUNCTION_TYPES) for arg in ast.walk(node.args)
                       if isinstance(arg, ast.arg) and isinstance(arg.annotation, ast.Name)]
        found = {id(cls): cls for _, name, module in project.reached(annotations, local, defined, folder)
                 if (cls := module.classes.get(name)) is not None}
        return list(found.values()) + _importers_training_arguments(ctx)

    supers = _super_calls(ctx.tree)
    seeding = FileSeeding([node for node, _, _ in nodes if isinstance(node, ast.Call)], _trains(ctx), follow,
                          trains_elsewhere, option_helpers, config_classes)
    creators = seeding.creators
    seeding.local_calls = _local_calls(nodes, defined, ctx.tree)
    seeding.tree = ctx.tree
    if any(ctx.imports.imports_root(root) for root in catalogue.HF_ARGUMENT_ROOTS):
        seeding.library_defaults = catalogue.HF_ARGUMENT_DEFAULTS
    seeding.assigned_attributes = frozenset(  # of objects, not of modules (`torch.backends.cuda.matmul.allow_tf32`)
        target.attr for node, _, _ in nodes if isinstance(node, ast.Assign) for target in node.targets
        if isinstance(target, ast.Attribute) and ctx.qualname(target.value) is None)
    seeding.outliving = {node.name: pinning.outliving(node, ctx.qualname) for node, _, _ in nodes
                         if isinstance(node, FUNCTION_TYPES)}
    seeding.definitions = {node.name: node for node, _, _ in nodes
                           if isinstance(node, FUNCTION_TYPES) and node.name in seeding.local_calls}
    made: dict[tuple[str | None, str], ast.Call] = {}  # (function, name) -> the call last assigned to the name
    unused = _unused_functions(ctx.tree) if ctx.is_entry_script() else frozenset()  # a library's are its API
    hub = _loads_fairseq_hub(ctx, seeding.calls)
    for node, guards, function in nodes:
        if function in unused:  # never runs: a seeder the script defines but never calls pins nothing
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            seeding.helper_calls.append((node, guards, function))
            continue
        if isinstance(node, ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call):
                made[function, node.targets[0].id] = node.value
            found = pinning.assign_effects(node, ctx.qualname)
        elif isinstance(node, ast.Call):
            qualified = ctx.call_qualname(node) or method_qualname(ctx, node) or _catalogued(ctx, node)
            owner = node.func.value if isinstance(node.func, ast.Attribute) else None
            creator = made.get((function, owner.id)) if isinstance(owner, ast.Name) else None
            _note_call(ctx, seeding, node, qualified, function, hub, creator)
            if qualified is None:
                if creator is not None:
                    creators[id(node)] = creator
                seeding.helper_calls.append((node, guards, function))
                continue
            found = pinning.call_effects(node, qualified) + _cudnn_switch(node, qualified)
        else:
            continue
        for summary, guard in found:
            extra = ((guard, True),) if guard is not None else ()
            seeding.direct.append(Effect(node, seeding.left(function, node, summary), guards + extra, function))
    return seeding


def _catalogued(ctx: FileContext, call: ast.Call) -> str | None:
    """The name of a seeder, or a drawer of seeds, of a library outside the known ones that the catalogue names
    (OpenMMLab's `mmdet.apis.set_random_seed` and `init_random_seed`, which seeds nothing), else None."""
    qualified = ctx.imports.resolve_any(call.func)
    return qualified if qualified in pinning.SEEDER_FAMILIES or qualified in catalogue.SEEDS_DRAWN_FOR_NONE else None


def _cudnn_switch(call: ast.Call, qualified: str) -> Pinned:
    """OpenMMLab's `set_random_seed(seed, deterministic=d)`, which sets only cuDNN's flags, when `d` is true (the
    condition: `d` when it is no literal)."""
    spec = catalogue.OPENMMLAB_SET_RANDOM_SEED.get(qualified)
    switch = argument(call, *spec) if spec is not None else None
    literal = constant(switch) if switch is not None else False
    if literal is NOT_CONSTANT:
        return [(pinning.CUDNN, switch)]
    return [(pinning.CUDNN, None)] if literal else []


def _determinism_option(call: ast.Call) -> ast.expr | None:
    """The option a helper call is given for a determinism keyword (`deterministic=args.deterministic`), if any."""
    return next((kw.value for kw in call.keywords if kw.arg and pinning.DETERMINISM_KEYWORD.search(kw.arg)
                 and isinstance(kw.value, (ast.Name, ast.Attribute))), None)


def _assuming(switch: ast.expr, value: bool, lookup: conditions.Lookup) -> conditions.Lookup:
    """`lookup`, but for `switch`, which it says holds `value`."""
    return lambda node: value if node is switch else lookup(node)


def _switched(off: Summary, on: Summary) -> Summary:
    """What a helper pins only with its determinism switch on."""
    return Summary(on.families - off.families, on.deterministic and not off.deterministic, on.hccl and not off.hccl,
                   on.nccl and not off.nccl, on.cudnn and not off.cudnn)


def _by_name(call: ast.Call, lookup: conditions.Lookup) -> Summary:
    """A call we cannot look into, by its name (`pinning.seeder_by_name`): its determinism keywords switch nothing
    on where `lookup` says they are false."""
    summary = pinning.seeder_by_name(call)
    switches = [kw.value for kw in call.keywords if kw.arg and pinning.DETERMINISM_KEYWORD.search(kw.arg)]
    if summary.deterministic and all(conditions.truth(switch, lookup) is False for switch in switches):
        return replace(summary, deterministic=False)
    return summary


def _importers_training_arguments(ctx: FileContext) -> list[ast.ClassDef]:
    """For a module defining a Hugging Face trainer subclass (LLaVA's llava_trainer.py, whose `self.args` holds
    the training arguments), the project's `TrainingArguments` subclasses in the files importing it (LLaVA's
    train.py declares `group_by_modality_length: bool = False`): their fields are the trainer's options."""
    if not any(ctx.imports.bindings.get(node.name) in catalogue.HF_TRAINERS
               for node in ctx.tree.body if isinstance(node, ast.ClassDef)):
        return []
    found = []
    for path in project.importers(ctx.path):
        module = project.load(Path(path))
        found += [cls for cls in module.classes.values() if any(
            module.imports.resolve_any(base) in catalogue.HF_TRAINING_ARGUMENTS for base in cls.bases)] if module else []
    return found


def _handed_over(calls: list[tuple[ast.Call, str | None]], local: project.LocalImports,
                 bound: dict[str, set[str]]) -> list[ast.Call]:
    """A call of each project function imported by name that a call (in its function) is given to run, fairseq's
    `call_main(cfg, pre_main)` (not a name the function binds itself: a parameter named like an import)."""
    return [ast.Call(func=arg, args=[], keywords=[]) for call, function in calls
            for arg in (*call.args, *(kw.value for kw in call.keywords))
            if isinstance(arg, ast.Name) and arg.id in local.refs and arg.id not in bound.get(function, ())]


def _super_calls(tree: ast.Module) -> dict[int, ast.ClassDef]:
    """The `super().name(...)` calls in the methods of the file's top-level classes, by id, with their class."""
    return {id(node): cls for cls in tree.body if isinstance(cls, ast.ClassDef) for node in ast.walk(cls)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call) and getattr(node.func.value.func, "id", None) == "super"}


def _inherited(tree: ast.Module, calls: list[ast.Call]) -> list[ast.Call]:
    """A call of each base class of the file's classes that `calls` build (LLaMA-Factory's v1 sft_trainer.py builds
    its `SFTTrainer(BaseTrainer)` and runs `fit()`, which the project's BaseTrainer defines): what they run may be
    the base's."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    return [ast.Call(func=base, args=[], keywords=[]) for call in calls
            if isinstance(call.func, ast.Name) and call.func.id in classes for base in classes[call.func.id].bases]


def _bound_names(tree: ast.Module) -> dict[str, set[str]]:
    """The names each function of the file binds (its parameters and assigned names), by function name."""
    bound: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, FUNCTION_TYPES):
            names = bound.setdefault(node.name, set())
            names.update(arg.arg for arg in ast.walk(node.args) if isinstance(arg, ast.arg))
            names.update(inner.id for inner in ast.walk(node) if isinstance(inner, ast.Name)
                         and isinstance(inner.ctx, ast.Store))
    return bound


def _given_parser(ctx: FileContext, calls: list[ast.Call]) -> list[ast.Call]:
    """The calls given, as an argument, a name the file assigns an `argparse.ArgumentParser(...)` to."""
    parsers = {target_name(node.targets[0]) for node in ast.walk(ctx.tree) if isinstance(node, ast.Assign)
               and isinstance(node.value, ast.Call)
               and ctx.imports.resolve_any(node.value.func) == "argparse.ArgumentParser"}
    return [call for call in calls if any(isinstance(arg, ast.Name) and arg.id in parsers for arg in call.args)]


def _local_calls(nodes: list[Located], defined: set[str], tree: ast.Module) -> dict[str, list[CallSite]]:
    """Where each function of the file is called by name. A function whose name occurs otherwise too in the code
    (passed as `worker_init_fn=`, called as `self.name()`, defined twice, imported, named in a string for
    `getattr`) is left out: where it runs is not known. Comments and docstrings do not count."""
    calls: dict[str, list[CallSite]] = {}
    for node, guards, function in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defined:
            calls.setdefault(node.func.id, []).append((guards, function, node))
    if not calls:
        return {}
    uses = _name_uses(tree, set(calls))
    return {name: found for name, found in calls.items() if uses[name] == 1 + len(found)}


def _unused_functions(tree: ast.Module) -> frozenset[str]:
    """The file's functions that nothing names: not called, passed or imported anywhere in it. Methods, dunders
    and decorated functions (which a registry or a framework may call) are not among them."""
    methods = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for item in node.body}
    candidates = {node.name for node in ast.walk(tree) if isinstance(node, FUNCTION_TYPES) and id(node) not in methods
                  and not node.decorator_list and not node.name.startswith("__")}
    if not candidates:
        return frozenset()
    uses = _name_uses(tree, candidates)
    return frozenset(name for name in candidates if uses[name] == 1)


def never_called(ctx: FileContext, function: ast.AST | None) -> bool:
    """Whether `function`, a top-level function (or undecorated class) of the file that nothing in it names, runs
    nowhere: no project file importing the file names it (an entry script that minddiffusion's image_datasets.py
    imports `MetaLoader` from is a library too), and the file is an entry script, or is imported (mindediting's
    `init_dist` in init_utils.py, whose importers use its `init_env`; DETR's `RandomCrop` in datasets/transforms.py,
    whose importers build other transforms). A module nobody imports may be an API: not known."""
    users = _users(ctx, function)
    return users is not None and not users[1] and (bool(users[0]) or ctx.is_entry_script())


def evaluation_users(ctx: FileContext, function: ast.AST | None) -> list[str]:
    """The project files that name `function` (as `never_called` finds them), when all are evaluation code by their
    names (BLIP's data/video_dataset.py, whose `VideoDataset` only eval_retrieval_video.py builds); else none."""
    users = _users(ctx, function)
    named = users[1] if users is not None else []
    if not named or any(module is None or not FileContext(str(module.path), module.source, module.tree).eval_file
                        for module in named):
        return []
    return [module.path.name for module in named]


def _users(ctx: FileContext, function: ast.AST | None) -> tuple[list, list] | None:
    """For a top-level function or undecorated class of the file that nothing in the file names: the project files
    importing the file that may call it (`project.function_importers`), and those of them that name it (None for
    one that cannot be read); None for anything else."""
    if function not in ctx.tree.body:
        return None
    cls = isinstance(function, ast.ClassDef)
    if cls and (function.decorator_list or _names_class(ctx.tree, function.name, ctx.imports.bindings, {})) \
            or not cls and function.name not in _unused_functions(ctx.tree):
        return None
    importers = [project.load(Path(path)) for path in project.function_importers(ctx.path, function.name)]
    return importers, [module for module in importers if module is None or (
        _names_class(module.tree, function.name, module.imports.bindings, module.local.refs) if cls
        else _name_uses(module.tree, {function.name}))]


def _names_class(tree: ast.Module, name: str, imported: Container[str], local: Container[str]) -> bool:
    """Whether `tree` names the class `name` (as a name, a string, an import, or an attribute of anything but a
    library module: DETR's `T.RandomCrop` is torchvision's in datasets/transforms.py, detectron2's in d2/'s
    dataset_mapper.py)."""
    return any(isinstance(node, ast.Name) and node.id == name or isinstance(node, ast.Constant) and node.value == name
               or isinstance(node, ast.alias) and (node.asname or node.name).rpartition(".")[2] == name
               or isinstance(node, ast.Attribute) and node.attr == name and not (
                   isinstance(node.value, ast.Name) and node.value.id in imported and node.value.id not in local)
               for node in ast.walk(tree))


def _name_uses(tree: ast.Module, names: set[str]) -> Counter:
    """How often each of `names` occurs in the code: as a name, an attribute, a definition, an import or a
    string that is just the name."""
    uses: Counter = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found = node.id
        elif isinstance(node, ast.Attribute):
            found = node.attr
        elif isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            found = node.name
        elif isinstance(node, ast.alias):
            found = (node.asname or node.name).rpartition(".")[2]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = node.value
        else:
            continue
        if found in names:
            uses[found] += 1
    return uses


def method_qualname(ctx: FileContext, call: ast.Call) -> str | None:
    """`lightning.Fabric.seed_everything` for `fabric.seed_everything()` when `fabric = L.Fabric(...)`."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    owner = target_name(func.value)
    created = ctx.assigned_calls.get(owner) if owner is not None else None
    return f"{created}.{func.attr}" if created is not None else None


def _is_eval(function: str | None) -> bool:
    """Whether the innermost enclosing function is evaluation-only by its name (`validate`, `test_x`)."""
    return function is not None and EVAL_NAME.search(function) is not None


def _is_local_def(call: ast.Call, defined: set[str]) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id in defined


def _function_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call) and node.args:  # functools.partial(seed_worker, ...)
        node = node.args[0]
    return getattr(node, "id", None) or getattr(node, "attr", "")


def _note_call(ctx: FileContext, seeding: FileSeeding, call: ast.Call, qualified: str | None,
               function: str | None, hub: bool, creator: ast.Call | None) -> None:
    """Record what a call (in `function`) says about the script: worker seeding, and (outside evaluation
    code) whether it trains, draws, exports a model, or loads weights (`hub`: see `_sampler_draws`; `creator`:
    the call that made the object of a method call, see `runs_library_training`)."""
    worker_init = keyword(call, "worker_init_fn")
    if worker_init is not None:
        seeding.worker_init.add(_function_name(worker_init))
    switch = _sampling_switch(ctx, call)
    if switch is not None:  # in evaluation code too: it samples the answers that are scored
        seeding.generating.append((function, switch))
    if _is_eval(function):
        return
    target = argument(call, 0, "fn") if qualified in catalogue.SPAWNING else None
    if isinstance(target, ast.Name):
        seeding.spawned.append((call, target.id))
    if ctx.is_trainer_run(call) or runs_library_training(ctx, call, creator):  # mmengine's runner trains only here
        seeding.trains = True
    found = ctx.imports.resolve_any(call.func) if qualified is None else None
    if found in LIBRARY_TRAINING or found and catalogue.is_optimizer_class(found):  # mindtorch's: `mindnlp.core.optim.AdamW`
        seeding.trains = True
    if qualified is not None:
        if (qualified in catalogue.TRAINER_CLASSES or qualified in catalogue.LIGHTNING_TRAINER_BUILDS
                or qualified in catalogue.MEGATRON_PRETRAIN or catalogue.is_optimizer_class(qualified)):
            seeding.trains = True
        elif qualified in SAMPLING_DRAWS:
            seeding.drawing.add(function)
        elif qualified in MODEL_EXPORTS:
            seeding.exporting.add(function)
        elif qualified in WEIGHT_LOADERS:
            seeding.loads_weights = True
    if isinstance(call.func, ast.Attribute) and call.func.attr in WEIGHT_LOADING_METHODS:
        seeding.loads_weights = True
    elif qualified is None and isinstance(call.func, ast.Attribute) and _sampler_draws(call.func.attr, call, hub):
        seeding.drawing.add(function)  # a diffusion sampler's loop draws its noise in project code


def runs_library_training(ctx: FileContext, call: ast.Call, creator: ast.Call | None = None) -> bool:
    """Whether `call` runs a library's training loop that `FileContext.is_trainer_run` does not know: in a MindSpore
    script, a `train(...)` given keywords of MindSpore's `Model.train` (of a model a project factory built:
    mindediting's `create_trainer_by_name(...)`), or MindSpore Reinforcement's `session.run(...)` (not given
    `is_train=False`) or `trainer.train(...)` of its classes or of the project's subclasses of them (`creator`: the
    call that made the object, when the file shows it)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "train" and ctx.imports.imports_root("mindspore") and any(
            kw.arg in catalogue.MINDSPORE_MODEL_TRAIN_KEYWORDS for kw in call.keywords):
        return True
    classes = catalogue.MINDSPORE_RL_RUNS.get(func.attr)
    creator = func.value if isinstance(func.value, ast.Call) else creator
    if classes is None or creator is None or constant(keyword(call, catalogue.MINDSPORE_RL_EVAL_SWITCH)) is False:
        return False
    return library_base(ctx, creator.func, classes) is not None


def library_base(ctx: FileContext, func: ast.expr, classes: frozenset[str]) -> str | None:
    """The class of `classes` that the class `func` names is or derives from: imported from its library (any, known
    or not), or a class of the file or of a project module (mindrl's `class DQNSession(Session)`)."""
    qualified = ctx.imports.resolve_any(func)
    if qualified in classes or not isinstance(func, ast.Name):
        return qualified if qualified in classes else None
    return project.class_base(project.file_module(ctx.path, ctx.tree, ctx.imports), func.id, classes)


def _sampling_switch(ctx: FileContext, call: ast.Call) -> ast.expr | None:
    """The `do_sample=` of a `model.generate(...)` call, given to it or to the `GenerationConfig(...)` it is given
    inline (transformers' GenerationMixin samples each token from torch's generator on the model's device when it
    is true, and searches greedily or by beam when it is false or absent, unless the model's own generation config
    says otherwise, which is not read)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == catalogue.HF_GENERATE):
        return None
    config = keyword(call, "generation_config")
    if isinstance(config, ast.Call) and ctx.call_qualname(config) in catalogue.HF_GENERATION_CONFIGS:
        return keyword(config, catalogue.HF_SAMPLING_SWITCH)
    return keyword(call, catalogue.HF_SAMPLING_SWITCH)


def _sampler_draws(method: str, call: ast.Call, hub: bool) -> bool:
    """Whether a method call of some object draws by its name (`SAMPLING_METHOD`): not when told not to sample
    (`sampling=False`), nor, in a file that loads fairseq's hub models (`hub`), their `sample(...)`, which
    searches by beam unless given `sampling=` true (the keywords of a `**` dict are not read)."""
    if not SAMPLING_METHOD.match(method):
        return False
    switch = keyword(call, catalogue.FAIRSEQ_SAMPLING_SWITCH)
    if switch is not None:
        return constant(switch) is not False
    return not (hub and method == catalogue.FAIRSEQ_HUB_SAMPLE)


def _loads_fairseq_hub(ctx: FileContext, calls: list[ast.Call]) -> bool:
    """Whether the file loads a fairseq hub model (`BARTModel.from_pretrained(...)` of a fairseq class,
    `torch.hub.load("pytorch/fairseq", ...)`)."""
    for call in calls:
        if not (isinstance(call.func, ast.Attribute) and call.func.attr in ("from_pretrained", "load")):
            continue  # a cheap filter before the names are resolved
        qualified = ctx.imports.resolve_any(call.func) or ""  # fairseq is not among the known libraries
        if qualified.partition(".")[0] == catalogue.FAIRSEQ_ROOT and qualified.endswith(".from_pretrained"):
            return True
        repository = constant(argument(call, 0, "repo_or_dir")) if qualified in catalogue.TORCH_HUB_LOADS else None
        if isinstance(repository, str) and catalogue.FAIRSEQ_ROOT in repository:
            return True
    return False


def _training_names(module: project.Module, trusted: Trusted, files_left: int = MAX_TRAINING_FILES) -> frozenset[str]:
    """The functions and classes of a project-local module that run training steps or a library trainer's loop
    (improved-diffusion's `TrainLoop`, a `train_one_epoch`, a factory returning such a class), themselves or through the training functions they import from other
    project modules (WeNet's `Executor.train` calls `batch_backward` of `train_utils`), followed `files_left`
    files deep; none when what the module pins itself (directly, or by calling a helper named like a seeder)
    is what `trusted` accepts, since what it pins is not followed from there: a training module that seeds is
    trusted to seed, not to switch deterministic kernels on (computed once per module, trust and depth)."""
    key = ("training_names", trusted, files_left)
    found = module.memo.get(key)
    if found is None:
        module.memo[key] = frozenset()  # modules importing each other find nothing more through the cycle
        ctx, pinned = _training_context(module)
        names: set[str] = set()
        if not trusted(pinned):
            # a library trainer's loop trains too (llm-foundry's `train(cfg)` builds Composer's Trainer and fits it)
            stepping = ctx.functions_calling({name for name, info in ctx.functions.items()
                                              if info.steps or info.trainer_run} | delegating_training(ctx))
            imported = _imported_training(module, trusted, files_left - 1) if files_left > 1 else set()
            if imported:
                stepping = ctx.functions_calling(stepping | imported)
            stepping = {name for name in stepping if not _is_eval(name)}
            names = stepping & module.functions.keys() | _training_classes(ctx, stepping)
            names |= {name for name in module.functions if any(node.name in names for node in module.classes_built(name))
                      or files_left > 1 and any(cls.name in _training_names(other, trusted, files_left - 1)
                                                for other, cls in project.registered_classes(module, name))}
        found = module.memo[key] = frozenset(names)
    return found


def delegating_training(ctx: FileContext) -> set[str]:
    """The file's functions and methods that hand an optimizer to a training method of an object the class holds,
    whose class is not known here (LAVIS' RunnerBase.train_epoch: `self.task.train_epoch(model=self.model,
    optimizer=self.optimizer, ...)`, a task built from a registry): that method runs the training loop."""
    return {function.name for function in ast.walk(ctx.tree)
            if isinstance(function, FUNCTION_TYPES) and delegated_training(ctx, function)}


def delegated_training(ctx: FileContext, function: ast.AST) -> list[ast.Call]:
    """The calls in `function` of a training method (`train`, `train_epoch`, ...) of an attribute of `self` that
    are handed an optimizer (see `delegating_training`)."""
    return [call for call in walk_scope(function) if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and TRAINING_METHOD.match(call.func.attr) and isinstance(call.func.value, ast.Attribute)
            and isinstance(call.func.value.value, ast.Name) and call.func.value.value.id == "self"
            and any(name and ctx.is_optimizer_name(name)
                    for name in map(target_name, (*call.args, *(k.value for k in call.keywords))))]


def _training_classes(ctx: FileContext, stepping: set[str]) -> set[str]:
    """The top-level classes of `ctx`'s file with a method among `stepping` (the file's functions that run training
    steps) that steps itself when other functions of the file share its name (see `_steps_itself`)."""
    # a data class's `__post_init__` fills in its fields: nanotron's ParallelismArgs builds its default
    # pipeline engine (a training class) there, for the trainer to run; building the record trains nothing
    shared = {name for name, count in Counter(node.name for node in ast.walk(ctx.tree)
                                              if isinstance(node, FUNCTION_TYPES)).items() if count > 1}
    return {node.name for node in ctx.tree.body if isinstance(node, ast.ClassDef)
            and any(isinstance(item, FUNCTION_TYPES) and item.name in stepping - {"__post_init__"}
                    and (item.name not in shared or _steps_itself(ctx, item, stepping)) for item in node.body)}


def own_training_classes(ctx: FileContext) -> set[str]:
    """The file's top-level classes with a method that runs training steps (outside evaluation code)."""
    return _training_classes(ctx, {name for name in ctx.stepping_functions() if not _is_eval(name)})


def _steps_itself(ctx: FileContext, method: ast.AST, stepping: set[str]) -> bool:
    """Whether `method`, whose name other functions of its module share (the `construct` of every MindSpore cell in
    minddet's centernet_det.py, where one of them applies gradients), runs a training step itself or calls another
    stepping function: the name alone does not tell."""
    for call in (node for node in ast.walk(method) if isinstance(node, ast.Call)):
        func = call.func
        callee = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if ctx.is_step_call(call) or callee in stepping and callee != method.name:
            return True
    return False


def _training_context(module: project.Module) -> tuple[FileContext, Summary]:
    """A project module's traversed context, and what its statements pin, under any condition (computed once
    per module)."""
    found = module.memo.get("training_context")
    if found is None:
        ctx = FileContext(str(module.path), module.source, module.tree)
        ctx.traverse({})
        pinned = NOTHING
        for node in ast.walk(module.tree):
            pinned |= _pinned(node, ctx)
        found = module.memo["training_context"] = (ctx, pinned)
    return found


def _imported_training(module: project.Module, trusted: Trusted, files_left: int) -> set[str]:
    """The names `module` imports (`from x import name`) that are training functions or classes of the project
    module defining them (through a package's re-export: LLaMA-Factory's tuner.py does `from .sft import run_sft`,
    which sft/__init__.py imports from .workflow)."""
    folder = module.path.parent
    found = set()
    for name, ref in module.local.refs.items():
        target = project.defining(folder, ref, ref.attr) if ref.attr else None
        if target is not None and target[1] in _training_names(target[0], trusted, files_left) \
                and not (target[1] in target[0].classes and _handed_on_only(module.tree, name)):
            found.add(name)
    return found


def _handed_on_only(tree: ast.Module, name: str) -> bool:
    """Whether every call of `name` in `tree` builds an object handed straight to another call or made a parameter's
    default (nanotron's `make_parallel_config(pp_engine=OneForwardOneBackwardPipelineEngine())`, for
    `ParallelismArgs(pp_engine=pp_engine)`): what receives it runs it, if anything."""
    handed = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call)
              for arg in (*node.args, *(kw.value for kw in node.keywords))}
    handed |= {id(default) for node in ast.walk(tree) if isinstance(node, ast.arguments)
               for default in (*node.defaults, *node.kw_defaults) if default is not None}
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name]
    return bool(calls) and all(id(call) in handed for call in calls)


def _pinned(node: ast.AST, ctx: FileContext) -> Summary:
    """What a call or assignment pins, under any condition, by the catalogue or (a call not in it) by its name."""
    if isinstance(node, ast.Assign):
        effects = pinning.assign_effects(node, ctx.qualname)
    elif isinstance(node, ast.Call):
        effects = pinning.call_effects(node, ctx.call_qualname(node) or method_qualname(ctx, node))
        # by its name, unless a method of some object (a `torch.Generator` of its own)
        if pinning.names_a_function(ctx.imports.bindings, node):
            effects.append((pinning.seeder_by_name(node), None))
    else:
        return NOTHING
    total = NOTHING
    for summary, _ in effects:
        total |= summary
    return total


def trusts_none(summary: Summary) -> bool:
    """Trust for whether code trains at all: none."""
    return False


def trains_at_module_level(ctx: FileContext) -> bool:
    """Whether the file's module-level code (outside functions and classes) builds or calls the project's training
    code: MindSpore-GAN's train.py builds its `TrainOneStepCell`, a project cell that `from src.TrainOneStep import *`
    brings, and calls it in a module-level loop; or builds a training class of the file itself (mindnlp's
    blip2_finetune_with_Food500Cap.py: `trainer = Trainer(...)`, whose `train_single` steps, then `trainer.train(10)`)."""
    calls = [node for node in walk_scope(ctx.tree) if isinstance(node, ast.Call)]
    if not calls:
        return False
    if ctx.module_level_calls & own_training_classes(ctx):
        return True
    return bool(training_calls(ctx, calls))


def training_calls(ctx: FileContext, calls: list[ast.Call]) -> list[tuple[ast.Call, str, project.Module]]:
    """(call, name, module) for those of `calls`, of the file `ctx`, that reach the project's training code,
    whatever it pins."""
    local = project.local_imports(ast.walk(ctx.tree))
    defined = {node.name for node in ast.walk(ctx.tree) if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef))}
    return [(call, name, module) for call, name, module in
            project.reached(calls, local, defined, project.file_folder(ctx.path))
            if name in _training_names(module, trusts_none)]


def _trains(ctx: FileContext) -> bool:
    """Whether the file runs training steps anywhere (module level, loops, functions) outside test code."""
    return (ctx.module_level_steps or any(info.steps for info in ctx.loops.values() if not _is_eval(info.function))
            or any(not _is_eval(name) for name in ctx.stepping_functions()))
