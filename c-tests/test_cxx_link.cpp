// test_cxx_link.cpp : the C API from C++ (extern "C" linkage, struct
// layouts under a C++ compiler), as C++ clients of libopencsd_c_api use it.
#include <cstdio>
#include <cstring>
#include <string>
#include "opencsd/c_api/opencsd_c_api.h"

static int fails = 0;
#define EXPECT(c) do { if (!(c)) { fails++; std::fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #c); } } while (0)

int main()
{
    EXPECT(ocsd_get_version() == 0x010800u);
    EXPECT(std::string(ocsd_get_version_str()) == "1.8.0");
    dcd_tree_handle_t h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    EXPECT(h != C_API_INVALID_TREE_HANDLE);
    auto cb = [](const void *, const ocsd_trc_index_t, const uint8_t, const ocsd_generic_trace_elem *) -> ocsd_datapath_resp_t {
        return OCSD_RESP_CONT;
    };
    EXPECT(ocsd_dt_set_gen_elem_outfn(h, cb, nullptr) == OCSD_OK);
    uint8_t frame[16] = { 0x21 };
    uint32_t n = 0;
    EXPECT(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, sizeof(frame), frame, &n) == OCSD_RESP_CONT);
    EXPECT(n == 16);
    EXPECT(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, nullptr, nullptr) == OCSD_RESP_CONT);
    ocsd_generic_trace_elem e;
    std::memset(&e, 0, sizeof(e));
    ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_EO_TRACE);
    char buf[128];
    EXPECT(ocsd_gen_elem_str(&e, buf, sizeof(buf)) == OCSD_OK);
    EXPECT(std::string(buf).rfind("OCSD_GEN_TRC_ELEM_EO_TRACE(", 0) == 0);
    ocsd_destroy_dcd_tree(h);
    std::printf("test_cxx_link: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
