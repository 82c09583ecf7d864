"""bpf_object_cc: a BPF C program compiled at build time and embedded in a C++ source."""

def bpf_object_cc(name, src, symbol, hdrs = []):
    """Compiles `src` with clang -target bpf into NAME.bpf.o and writes NAME.cc.

    NAME.cc defines perfring::bpf::SYMBOL (an EmbeddedObject, bpf/embedded_objects.h)
    holding the object's bytes. clang runs against the minimal types in the .bpf.c
    (CO-RE: no vmlinux.h, nothing read from /sys at build time), libbpf's headers and
    the UAPI headers (asm/ from the multiarch directory).
    """
    native.genrule(
        name = name + "_o",
        srcs = [src] + hdrs,
        outs = [name + ".bpf.o"],
        cmd = ("clang -target bpf -O2 -g -Wall -Werror -I. " +
               "-idirafter /usr/include/$$(uname -m)-linux-gnu " +
               "-c $(location %s) -o $@") % src,
    )
    native.genrule(
        name = name + "_cc",
        srcs = [":" + name + "_o"],
        outs = [name + ".cc"],
        cmd = "$(location //bpf:embed_object.sh) $(location :%s_o) %s $@" % (name, symbol),
        tools = ["//bpf:embed_object.sh"],
    )
