"""The generators of reinforcement-learning code that `random`, NumPy and torch seeding does not reach (seed-partial):
a gymnasium (or gym) env's, seeded by its first `reset(seed=...)`, an action space's, seeded by `space.seed(...)`,
and those a Stable-Baselines3 algorithm built without a seed trains with (see `catalogue.SB3_ALGORITHMS`)."""

from __future__ import annotations

import ast

from msprobe_rewriter import catalogue, conditions, seeding
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import NOT_CONSTANT, FileContext, constant, keyword, target_name, unpacks

RESET = ("`{call}` without `seed=` leaves the env's generator to seed itself from OS entropy (at the first reset "
         "given no seed), which `random`/NumPy/torch seeding does not reach: call `{owner}.reset(seed=seed)` once at "
         "the start (later resets continue its generator){old}")
OLD_GYM = "; before gym 0.26, `{owner}.seed(seed)`"
SAMPLE = ("`{call}` draws from the action space's own generator, seeded from OS entropy, which `random`/NumPy/torch "
          "seeding does not reach: call `{owner}.seed(seed)` once at the start")
ALGORITHM = ("`{name}(...)` {given}, so Stable-Baselines3 seeds nothing: the env `{name}.learn()` trains on (and the "
             "action space off-policy algorithms draw warm-up actions from) starts from OS entropy{numpy}: pass "
             "`seed=seed` to `{name}(...)`, which seeds `random`, NumPy, torch, the env and the action space")
NUMPY = (", and its replay sampling, minibatch order, exploration and action noise draw from NumPy's global "
         "generator, which this file leaves unseeded")


def unseeded(ctx: FileContext) -> list[tuple[ast.AST, str]]:
    """The first unseeded env reset and action-space draw, and the unseeded Stable-Baselines3 algorithms, of an entry
    script that otherwise seeds some generator family (one that seeds none is seed-missing's), each with its message."""
    algorithms, draws = unseeded_algorithms(ctx), gym_draws(ctx)
    if not algorithms and not draws:  # most files: no project helper is read
        return []
    facts = seeding.analyse(ctx)
    if not any(effect.summary.families and effect.node not in algorithms for effect in facts.effects):
        return []
    numpy = facts.default_run(lambda e: "numpy" in e.summary.families and e.node not in algorithms).pinned
    found = [(algorithm, ALGORITHM.format(name=condition_text(algorithm.func), given=given,
                                          numpy="" if numpy else NUMPY)) for algorithm, given in algorithms.items()]
    for call, kind in draws:
        func = call.func
        owner = condition_text(func.value)
        old = OLD_GYM.format(owner=owner) if old_gym(ctx) else ""
        found.append((call, (RESET if kind == "reset" else SAMPLE).format(call=condition_text(func) + "()", owner=owner,
                                                                          old=old)))
    return found


def gym_draws(ctx: FileContext) -> list[tuple[ast.Call, str]]:
    """In a file importing gymnasium (or gym): the first reset of an env a gymnasium call made (`gym.make`,
    `gym.vector.SyncVectorEnv`, a wrapper) that is not given a seed, when no reset or `env.seed(s)` before it seeded
    one, nor a call the name was assigned was given `seed=` (cleanrl's `envs = isaacgymenvs.make(seed=args.seed,
    ...)`, then wrapped) ("reset"), and the first `*.action_space.sample()` before any `*.action_space.seed(s)`
    ("sample")."""
    if not any(ctx.imports.imports_root(root) for root in catalogue.GYM_ROOTS):
        return []
    assigned = [(target_name(target), node.value) for node in ast.walk(ctx.tree) if isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call) for target in node.targets]
    built_seeded = {name for name, call in assigned
                    if (seed := keyword(call, "seed")) is not None and constant(seed) is not None}
    envs = {name for name, call in assigned if _from_gym(ctx, call)} - built_seeded
    found: list[tuple[ast.Call, str]] = []
    reset = sample = False  # settled: a seeded one came first, or the first unseeded one is found
    for call in _calls(ctx):
        func = call.func
        if not isinstance(func, ast.Attribute):
            continue
        if func.attr in ("reset", "seed") and target_name(func.value) in envs and not reset:
            reset = True
            seed = keyword(call, "seed") if func.attr == "reset" else (call.args or [None])[0]
            if (seed is None or constant(seed) is None) and not unpacks(call):
                found.append((call, "reset"))
        elif func.attr in ("sample", "seed") and getattr(func.value, "attr", None) in catalogue.GYM_ACTION_SPACES \
                and not sample:
            sample = True
            if func.attr == "sample":
                found.append((call, "sample"))
    return found


def old_gym(ctx: FileContext) -> bool:
    """Whether the file imports gym, not gymnasium: before gym 0.26 `reset()` takes no seed (`env.seed(s)` seeds)."""
    return ctx.imports.imports_root("gym") and not ctx.imports.imports_root("gymnasium")


def _calls(ctx: FileContext) -> list[ast.Call]:
    return sorted((node for node in ast.walk(ctx.tree) if isinstance(node, ast.Call)),
                  key=lambda node: (node.lineno, node.col_offset))


def _from_gym(ctx: FileContext, call: ast.Call) -> bool:
    qualified = ctx.imports.resolve_any(call.func) or ""
    return qualified.partition(".")[0] in catalogue.GYM_ROOTS


def unseeded_algorithms(ctx: FileContext) -> dict[ast.Call, str]:
    """The Stable-Baselines3 algorithms the file trains (`model.learn(...)` of a name assigned one, or
    `PPO(...).learn(...)`) that seed nothing with the default arguments, each with how its seed is given."""
    facts = seeding.analyse(ctx)
    built = {target_name(node.targets[0]): node.value for node in ast.walk(ctx.tree) if isinstance(node, ast.Assign)
             and len(node.targets) == 1 and isinstance(node.value, ast.Call)
             and ctx.built_qualname(node.value) in catalogue.SB3_ALGORITHMS}
    learned = [call.func.value if isinstance(call.func.value, ast.Call) else built.get(target_name(call.func.value))
               for call in _calls(ctx) if isinstance(call.func, ast.Attribute) and call.func.attr == catalogue.SB3_LEARN
               and ctx.is_trainer_run(call)]
    return {algorithm: given for algorithm in learned if algorithm is not None
            and (given := _unseeded(algorithm, facts)) is not None}


def _unseeded(algorithm: ast.Call, facts: seeding.FileSeeding) -> str | None:
    """How an algorithm's constructor leaves it unseeded with the default arguments, else None."""
    seed = keyword(algorithm, "seed")
    literal = constant(seed) if seed is not None else None
    if seed is None and unpacks(algorithm):
        return None  # a `**mapping` may hold it
    if literal is None:
        return "is given no seed" if seed is None else "is given `seed=None`"
    if literal is NOT_CONSTANT and conditions.value(seed, facts.lookup) is None:
        return f"is given `seed={condition_text(seed)}`, None with the default arguments"
    return None
