"""Live task sampling: TRL's RepeatSampler group semantics kept, all-same problems drawn less,
the same order on every rank."""

from __future__ import annotations

import pytest

from curriculab.training.sampling import LiveRepeatSampler, LiveSamplingSettings, ProblemStats


@pytest.mark.slow
def test_the_order_keeps_repeat_sampler_groups():
    stats = ProblemStats(group_size=4)
    ids = [f"p{k}" for k in range(10)]
    sampler = LiveRepeatSampler(ids, stats, mini_repeat_count=4, batch_size=3, repeat_count=2, seed=7)
    order = list(sampler)
    assert len(order) == len(sampler) == (10 // 3) * 3 * 4 * 2
    block = 3 * 4
    for start in range(0, len(order), 2 * block):
        first, second = order[start : start + block], order[start + block : start + 2 * block]
        assert first == second  # each chunk repeated repeat_count times (steps_per_generation)
        for k in range(0, block, 4):
            assert len(set(first[k : k + 4])) == 1  # each prompt num_generations times in a row


@pytest.mark.slow
def test_every_rank_draws_the_same_order_from_the_same_statistics():
    def sampler() -> LiveRepeatSampler:
        stats = ProblemStats(group_size=8)
        stats.observe(["a"] * 8 + ["b"] * 8, [0.0] * 8 + [1.0, 0.0] * 4)
        return LiveRepeatSampler(["a", "b", "c", "d"], stats, mini_repeat_count=8, batch_size=2, seed=3)

    assert list(sampler()) == list(sampler())


def test_an_unseen_problem_weighs_the_chance_that_a_fresh_group_differs():
    settings = LiveSamplingSettings()
    stats = ProblemStats(group_size=8, settings=settings)
    assert stats.weight("new") == pytest.approx((7 / 9) ** settings.sharpness)  # 1 − 2/(G + 1) under Beta(1, 1)


def test_problems_whose_groups_are_all_zero_or_all_one_are_demoted_and_still_retried():
    stats = ProblemStats(group_size=8)
    for _ in range(3):
        stats.observe(["never"] * 8 + ["always"] * 8 + ["mixed"] * 8, [0.0] * 8 + [1.0] * 8 + [1.0, 0.0] * 4)
    never, always, mixed = stats.weight("never"), stats.weight("always"), stats.weight("mixed")
    assert mixed > 0.5 and never < 0.1 and always < 0.1
    assert never >= stats.settings.floor and always >= stats.settings.floor
    assert stats.groups == 9 and stats.all_same == 6
    sampler = LiveRepeatSampler(["never", "always", "mixed"], stats, mini_repeat_count=1, batch_size=1, seed=0)
    draws = [index for _ in range(200) for index in sampler]
    share = draws.count(2) / len(draws)
    assert share > 0.8 and draws.count(0) > 0  # mostly the informative one; the others now and then


def test_a_sandbox_fault_says_nothing_about_the_problem():
    stats = ProblemStats(group_size=4)
    stats.observe(["a"] * 4, [None] * 4)
    assert stats.groups == 0 and stats.weight("a") == stats.weight("unseen")


def test_evidence_fades_as_the_model_changes():
    stats = ProblemStats(group_size=8, settings=LiveSamplingSettings(decay=0.5))
    for _ in range(5):
        stats.observe(["p"] * 8, [0.0] * 8)
    demoted = stats.weight("p")
    stats.observe(["p"] * 8, [1.0, 0.0] * 4)
    assert stats.weight("p") > demoted


@pytest.mark.parametrize(
    "bad, message", [({"decay": 0.0}, "decay"), ({"sharpness": -1.0}, "sharpness"), ({"floor": 2.0}, "floor")]
)
def test_settings_refuse_values_that_make_no_sense(bad, message):
    with pytest.raises(ValueError, match=message):
        LiveSamplingSettings(**bad)


def test_a_batch_larger_than_the_dataset_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="needs at least as many dataset rows"):
        LiveRepeatSampler(["a"], ProblemStats(group_size=2), mini_repeat_count=2, batch_size=2)


def _rank(rank: int, world: int, init: str, results) -> None:
    import torch.distributed as dist

    from curriculab.training.sampling import gathered

    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        stats = ProblemStats(group_size=4)
        local = [f"p{rank}"] * 4  # each rank scored a different problem's group
        stats.observe(*gathered(local, [float(rank)] * 4))
        order = list(LiveRepeatSampler(["p0", "p1", "p2"], stats, mini_repeat_count=4, batch_size=2, seed=1))
        results.put((rank, sorted(stats.counts.items()), order))
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_every_rank_updates_the_same_statistics_and_draws_the_same_order(tmp_path):
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    init = f"file://{tmp_path / 'rendezvous'}"
    workers = [context.Process(target=_rank, args=(rank, 2, init, results)) for rank in range(2)]
    for worker in workers:
        worker.start()
    got = sorted(results.get(timeout=120) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)
    (_, counts_0, order_0), (_, counts_1, order_1) = got
    assert counts_0 == counts_1 and {p for p, _ in counts_0} == {"p0", "p1"}  # both ranks' groups, on both ranks
    assert order_0 == order_1
