"""perfring_fuzzer: one libFuzzer target and its corpus test.

Under --config=fuzz (clang, -fsanitize=fuzzer,address,undefined; see
.bazelrc) NAME is a libFuzzer binary. Under the normal GCC build it links
standalone_main.cc instead, so the same entry point replays files, and
NAME_test replays the checked-in corpus (tests/fuzz/corpus/<corpus>/) in the
normal test suite. Under --config=fuzz NAME_test fuzzes for a short time
(FUZZ_SECONDS, default 6) from that corpus; a crash fails it and its input is
kept in the test's undeclared outputs.
"""

def perfring_fuzzer(name, srcs, deps, corpus):
    native.cc_binary(
        name = name,
        srcs = srcs,
        deps = deps + select({
            ":fuzzing": [],
            "//conditions:default": [":standalone_main"],
        }),
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        testonly = True,
        tags = ["fuzz_target"],
    )
    native.sh_test(
        name = name + "_test",
        size = "medium",
        srcs = ["run_fuzzer.sh"],
        args = [
            "$(location :%s)" % name,
            "$(location :mode)",
            "$(location :perfring.dict)",
            "tests/fuzz/corpus/" + corpus,
        ],
        data = [
            ":" + name,
            ":mode",
            ":perfring.dict",
        ] + native.glob(["corpus/%s/*" % corpus]),
        tags = ["fuzz"],
    )
