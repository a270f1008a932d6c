"""Checks a `kagent curate` train.jsonl the way trainers read it (run by tests/cli/dataset_cli_test.cpp):
datasets.load_dataset("json") loads it, and TRL's SFTTrainer prepares it (chat template applied,
tokenized) with a tiny model and tokenizer built here on CPU. Exit 77: a package is missing."""

import sys


def main(path: str) -> int:
    try:
        import datasets
        import torch  # noqa: F401
        import transformers
        from tokenizers import Tokenizer, models, pre_tokenizers
        from trl import SFTConfig, SFTTrainer
    except ImportError as e:
        print(f"skip: {e}")
        return 77
    ds = datasets.load_dataset("json", data_files=path, split="train")
    assert len(ds) > 0, "no rows"
    assert "messages" in ds.column_names
    for row in ds:
        roles = [m["role"] for m in row["messages"]]
        assert roles[-1] == "assistant" and roles[0] == "system" and "user" in roles, roles

    # A word-level tokenizer over the dataset's own words, with a chat template, and a tiny Llama.
    words = sorted({w for row in ds for m in row["messages"] for w in (m["content"] or "").split()})
    vocab = {"<unk>": 0, "<pad>": 1, "<s>": 2, "</s>": 3, "<|user|>": 4, "<|assistant|>": 5, "<|system|>": 6}
    for w in words:
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                                bos_token="<s>", eos_token="</s>")
    fast.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} </s> {% endfor %}"
                          "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    config = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=8192)
    model = transformers.LlamaForCausalLM(config)
    args = SFTConfig(output_dir=sys.argv[2] if len(sys.argv) > 2 else "/tmp/kagent-sft-check", max_steps=1,
                     per_device_train_batch_size=1, report_to=[], use_cpu=True, max_length=8192, save_strategy="no")
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=fast)
    prepared = trainer.train_dataset
    assert "input_ids" in prepared.column_names and len(prepared) == len(ds)
    first = fast.decode(prepared[0]["input_ids"])
    assert "<|assistant|>" in first and "<|system|>" in first, first[:200]
    trainer.train()  # one step on CPU: the prepared batch goes through the model
    print(f"ok: {len(ds)} rows loaded by datasets and prepared by TRL's SFTTrainer")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
