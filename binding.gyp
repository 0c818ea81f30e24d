{
  "targets": [
    {
      "target_name": "dbsmack_io",
      "sources": ["native/dbsmack_io.cc"],
      "cflags_cc": ["-O2", "-std=c++17", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "cflags_cc!": ["-fno-exceptions"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [["OS!='linux'", {"type": "none"}]]
    }
  ]
}
