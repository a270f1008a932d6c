// A stand-in for a native candidate's shared object (library_instances_test.cpp): the
// namespace symbol kagent's binding defines, and static state a second load must not share.
extern "C" const char kagent_op_namespace[] = "kagent_0123456789abcdef";
extern "C" int kagent_test_calls() {
  static int calls = 0;
  return ++calls;
}
