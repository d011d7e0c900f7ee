"""CatalystBench: multi-head full-task fine-tuning (MFT) of a shared LM backbone on a mixed scientific benchmark.

Paper: "CatalystBench: A Comprehensive Multi-Task Benchmark for Advancing Language Models in Catalysis Science"
(ICLR 2026 submission, OpenReview tCFYwPdmT4; no arXiv id). The paper builds eight catalysis tasks (extraction,
classification, regression of Faradaic efficiency, adsorption energy, d-band centre and formation energy, scheme
comprehension) and fine-tunes ChemLLM-7B with LoRA (r = 8) so that a task-type token routes the last hidden state to
a classification MLP, a regression MLP (MSE) or the LM head, under a weighted composite loss (MFT); it compares
single-task (ST), full-task text-only (FT) and multi-head single-task (MST) fine-tuning.

Implemented (a miniature with real data that ships offline): a six-task benchmark from the element records of
``mendeleev`` (three regression targets, two classifications, extraction of the melting point from generated
sentences with distractor numbers; fixed element-level splits) (``bench``); the shared backbone SmolLM2-135M with
LoRA (rank 4, query and value) on its last decoder layer, the 29 lower layers frozen and their output cached, the
routed heads and the composite loss (``heads``, ``fit``); the four methods (``methods``); gradient boosting per task
and a regular-expression extractor as the baselines outside the LM (``baselines``); the element-records upload
(``records``); the jobs (``jobs``). Left out: the catalysis data (literature and DFT sets, not available offline),
the 7B backbone, LoRA on every layer, LLM-judge and expert evaluation of the text tasks.

| name | label | kind | what |
|------|-------|------|------|
| ``st`` | ST (single-task, text) | baseline | one LoRA per task, every answer as text from the LM head |
| ``mst`` | MST (single-task, heads) | ablation | one LoRA per task with the task's decoupled head |
| ``ft`` | FT (all tasks, text) | baseline | one shared LoRA, every answer as text (numbers as text) |
| ``mft`` | MFT (all tasks, routed heads) | ours | one shared LoRA, task-type token routing to classification / regression MLPs or the LM head |
| ``gb`` | gradient boosting + regex | baseline | scikit-learn gradient boosting per task on the record's numbers; a regular expression for extraction |

(``methods.METHODS`` and ``methods.BASELINES``.) Shapes: cached last-layer inputs ``(T, 576)`` per row; heads read the
final-norm state ``(576,)`` at the last prompt position. ``run_benchmark(BenchmarkConfig) -> BenchmarkResult``
(per method, seed and task: R^2, accuracy or exact match; paired comparisons; costs); ``run_predict(PredictConfig) ->
PredictResult`` (every method's prediction for the user's records and sentences).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "Task": "bench", "TASKS": "bench", "Bench": "bench", "Row": "bench", "build_bench": "bench",
    "element_records": "bench",
    "TopLayer": "heads", "Adapter": "heads", "MLPHead": "heads", "cache_states": "heads",
    "FitSettings": "fit", "train_units": "fit", "predict": "fit", "score": "fit", "infer": "fit",
    "METHODS": "methods", "BASELINES": "methods", "LMMethod": "methods",
    "gradient_boosting": "baselines", "regex_extract": "baselines",
    "read_records": "records",
    "BenchmarkConfig": "jobs", "BenchmarkResult": "jobs", "run_benchmark": "jobs",
    "PredictConfig": "jobs", "PredictResult": "jobs", "run_predict": "jobs",
})
