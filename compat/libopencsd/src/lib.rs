//! `libopencsd.so`: OpenCSD ships its decoder as a C++ library that
//! `libopencsd_c_api.so` sits on, and clients such as perf link both
//! (`-lopencsd_c_api -lopencsd`). Here the whole decoder, with the C API,
//! lives in `libopencsd_c_api.so`; this library exists so that those link
//! lines and the binaries built with them (`DT_NEEDED libopencsd.so.1`)
//! keep working. It exports no C API of its own.
