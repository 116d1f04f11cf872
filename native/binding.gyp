{
  "targets": [
    {
      "target_name": "start_process",
      "sources": ["spawn.c", "run-folder.c", "proc-scan.c", "napi-util.c"],
      "cflags": ["-Wall", "-Wextra", "-O2"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
