"""Run a pipeline over many texts in partitions, in this process or on a Dask cluster.

A :class:`Job` names the pipeline (as ``load_pipeline`` takes it), its overrides and what
each partition returns: ``"docbin"`` (the bytes of a ``DocBin(store_user_data=True)``:
sentences, span groups with their scores and ``doc._.head_pairs`` survive),
``"sentences"`` (the JSON lines of ``segment --format jsonl``) or ``"chunks"`` (those of
``chunk``). :func:`process_partition` does the work wherever it runs; each process loads
the pipeline once. :func:`run` cuts the texts into partitions of whole batches, so a
partition's batches are the ones ``nlp.pipe(texts, batch_size=...)`` makes in one
process and the results are the same, and yields the partitions' results in input order
with a bounded number in flight.

With ``engine="dask"`` the partitions go to ``dask.distributed`` workers: a local
cluster of ``workers`` processes with one thread each, or the scheduler at ``address``.
"""

import json
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from .errors import Errors, is_whole_number
from .records import RECORDS, Item, as_pairs, json_line, pipe_docs, pipe_records

OUTPUTS = ("docbin", *RECORDS)
ENGINES = ("", "dask")
Result = Union[bytes, List[str]]
#: The environment of a local cluster's worker processes (Dask's nanny
#: ``pre-spawn-environ``): one OpenMP/BLAS thread each, as Dask sets it, and glibc's own
#: malloc trimming instead of Dask's MALLOC_TRIM_THRESHOLD_=65536.
WORKER_ENVIRON = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Job:
    """What a worker runs: the pipeline, its config overrides, the output kind, the
    batch size of ``nlp.pipe``, torch's threads per process, the GPU (-1: the CPU) and
    the tokenizer that counts chunks (``records.load_tokenizer``; "": the pipeline's)."""

    model: str
    output: str
    overrides: Dict[str, Any] = field(default_factory=dict)
    batch_size: int = 16
    threads: int = 1
    gpu_id: int = -1
    tokenizer: str = ""

    def __post_init__(self) -> None:
        if self.output not in OUTPUTS:
            raise ValueError(Errors.E024.format(value=self.output, values=OUTPUTS))
        if not (is_whole_number(self.batch_size) and is_whole_number(self.threads)):
            raise ValueError(
                Errors.E113.format(
                    option="batch_size / threads",
                    value=(self.batch_size, self.threads),
                    allowed="whole numbers of at least 1",
                )
            )

    def key(self) -> str:
        return json.dumps([self.model, self.overrides, self.threads, self.gpu_id], sort_keys=True)


_PIPELINES: Dict[str, Any] = {}


def job_pipeline(job: Job) -> Any:
    """The job's pipeline, loaded once per process (with torch's threads set)."""
    key = job.key()
    if key not in _PIPELINES:
        import torch

        from .loading import load_pipeline, use_gpu

        torch.set_num_threads(job.threads)
        use_gpu(job.gpu_id)
        _PIPELINES.clear()
        _PIPELINES[key] = load_pipeline(job.model, overrides=job.overrides)
    return _PIPELINES[key]


def process_partition(job: Job, texts: List[Item], first: int = 0) -> Result:
    """Run the job's pipeline over ``texts`` (documents ``first``, ``first + 1``, ...
    of the input) and return what ``job.output`` asks for."""
    from spacy.tokens import DocBin

    nlp = job_pipeline(job)
    if job.output == "docbin":
        # an item's meta as doc.user_data["meta"] (where lists read back as tuples)
        out = DocBin(store_user_data=True)
        reader = "a DocBin (`segment --output`) holds"
        documents = pipe_docs(nlp, texts, job.batch_size, first, reader=reader)
        for number, (doc, meta) in enumerate(documents, start=first):
            if meta:
                storable(meta, number)
                doc.user_data["meta"] = meta
            out.add(doc)
        return bytes(out.to_bytes())
    for number, (_, meta) in enumerate(as_pairs(texts), start=first):
        if meta:
            writable(meta, number)
    records = pipe_records(
        nlp, texts, job.output, batch_size=job.batch_size, first=first, tokenizer=job.tokenizer
    )
    return [json_line(record) for record in records]


@dataclass(frozen=True)
class Packed:
    """A partition's texts as one argument of a Dask task: as JSON text where they are
    JSON (the command line's always are), else as they are. Dask reads a task's lists,
    tuples and dicts item by item and pickle saves them, both recursively, so a
    document whose other fields nest some 500 levels deep overflowed Python's stack in
    either; an object of its own Dask passes through, and a string pickles flat. (Read
    back as JSON reads: a tuple in a meta comes back a list, as JSON lines and a DocBin
    write both, and a key that is not a string comes back a string.)"""

    state: str = ""
    items: Optional[List[Item]] = None

    @classmethod
    def of(cls, texts: List[Item]) -> "Packed":
        try:
            return cls(state=json.dumps([_json_item(item) for item in texts], ensure_ascii=False))
        except (TypeError, ValueError, RecursionError):
            return cls(items=texts)

    def texts(self) -> List[Item]:
        if self.items is not None:
            return self.items
        items = json.loads(self.state)
        return [i if isinstance(i, str) else (i["text"], i["meta"]) for i in items]


def _json_item(item: Item) -> Any:
    """An item as JSON: a text as it is, a ``(text, meta)`` pair as an object."""
    if isinstance(item, str):
        return item
    if isinstance(item, tuple) and len(item) == 2:
        return {"text": item[0], "meta": item[1]}
    raise TypeError("neither a text nor a (text, meta) pair")


def process_packed(job: Job, packed: Packed, first: int) -> Result:
    """:func:`process_partition` of a :class:`Packed` partition (the Dask task)."""
    return process_partition(job, packed.texts(), first)


def storable(meta: Dict[str, Any], number: int) -> None:
    """Stops with E142 where document ``number``'s ``meta`` is JSON that MessagePack, a
    DocBin's format, cannot hold (an integer beyond 64 bits, nesting past its limit),
    and with E144 where it holds a value of a type MessagePack has no form for (a date,
    a set), which ``DocBin.add`` would meet deep in its packer."""
    import srsly

    try:
        srsly.msgpack_dumps({"meta": meta})  # (as it sits in doc.user_data)
    except OverflowError:
        reason = "they hold an integer beyond 64 bits"
    except ValueError:
        reason = "they nest deeper than it goes"
    except TypeError as error:  # (a value of a type it has no form for)
        reason = str(error)
        message = Errors.E144.format(number=number, where="a DocBin", reason=reason)
        raise ValueError(message) from None
    else:
        return
    raise ValueError(Errors.E142.format(number=number, reason=reason))


def writable(meta: Dict[str, Any], number: int) -> None:
    """Stops with E144 where document ``number``'s ``meta`` holds what JSON lines cannot
    (a value of a type JSON has no form for, a number that is not finite, nesting
    deeper than the writer goes), before its pass: ``json.dumps`` would meet it as the
    record is written, or write a NaN that strict readers refuse."""
    try:
        json.dumps(meta, allow_nan=False)
    except TypeError as error:
        reason = str(error)
    except ValueError:
        reason = "it holds NaN or an infinity, which JSON has no form for"
    except RecursionError:
        reason = "they nest deeper than the JSON writer goes"
    else:
        return
    raise ValueError(Errors.E144.format(number=number, where="JSON lines", reason=reason))


def partitions(texts: Iterable[Item], size: int) -> Iterator[Tuple[int, List[Item]]]:
    """``(first, texts)`` of consecutive partitions of ``size`` texts (the last may be
    shorter), read lazily."""
    iterator = iter(texts)
    first = 0
    while True:
        part = list(islice(iterator, size))
        if not part:
            return
        yield first, part
        first += len(part)


def partition_size(size: int, batch_size: int) -> int:
    """``size`` rounded up to whole batches (at least one)."""
    return max(1, -(-size // batch_size)) * batch_size


def run(
    texts: Iterable[Item],
    job: Job,
    *,
    engine: str = "",
    workers: int = 2,
    address: Optional[str] = None,
    size: int = 64,
    on_done: Optional[Callable[[int], None]] = None,
) -> Iterator[Result]:
    """The results of the partitions of ``texts``, in input order.

    engine: "" runs the partitions in this process; "dask" on a ``dask.distributed``
        cluster (``address`` of a running scheduler, or a local cluster of ``workers``
        processes, one thread each, started and closed here).
    size: texts per partition, rounded up to whole batches of ``job.batch_size``.
    ``size`` and ``workers`` are Python ints of at least 1, or E015.
    on_done: called with the number of documents of each finished partition.
    """
    if isinstance(texts, str):
        raise TypeError(Errors.E118.format(function="scale.run()"))
    if engine not in ENGINES:
        raise ValueError(Errors.E024.format(value=engine, values=ENGINES))
    for key, value in (("size", size), ("workers", workers)):
        if not is_whole_number(value):
            raise ValueError(Errors.E015.format(key=key, value=value, least=1))
    parts = partitions(texts, partition_size(size, job.batch_size))
    if not engine:
        for first, part in parts:
            yield process_partition(job, part, first)
            if on_done is not None:
                on_done(len(part))
        return
    yield from _run_dask(parts, job, workers=workers, address=address, on_done=on_done)


def _run_dask(
    parts: Iterator[Tuple[int, List[Item]]],
    job: Job,
    *,
    workers: int,
    address: Optional[str],
    on_done: Optional[Callable[[int], None]],
) -> Iterator[Result]:
    from collections import deque

    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError(Errors.E025) from None
    cluster = None
    if address is None:
        import dask

        # Dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 by default, which made the
        # pipeline 25% slower (glibc returns and refaults the transformer's buffers)
        with dask.config.set({"distributed.nanny.pre-spawn-environ": WORKER_ENVIRON}):
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            )
    client = Client(cluster if cluster is not None else address)
    try:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        in_flight: Any = deque()
        for first, part in parts:
            # pure=False: the same texts twice are two tasks
            in_flight.append(
                (len(part), client.submit(process_packed, job, Packed.of(part), first, pure=False))
            )
            if len(in_flight) >= 2 * n_workers:
                yield _collect(in_flight.popleft(), on_done)
        while in_flight:
            yield _collect(in_flight.popleft(), on_done)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _collect(entry: Tuple[int, Any], on_done: Optional[Callable[[int], None]]) -> Result:
    n_docs, future = entry
    result = future.result()
    future.release()
    if on_done is not None:
        on_done(n_docs)
    return result  # type: ignore[no-any-return]
