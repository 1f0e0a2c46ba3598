/*
 * test_mem_acc_list.c : the memory accessor list as OpenCSD 1.8.0 keeps it
 * through the C API: one file accessor object per path (a second add of the
 * path must start one of its ranges), a file's regions stretching its base
 * range, the overlap test (only the new accessor's first and last address
 * are tested, so an enclosing range is taken), removal of the first
 * accessor holding an address, a removed file's object kept for later
 * adds, and the objects shared by all trees until none holds them.
 */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "opencsd/c_api/opencsd_c_api.h"
#include "check.h"

static const char *make_file(const char *name, size_t len)
{
    FILE *f = fopen(name, "wb");
    size_t i;
    if (!f)
        return NULL;
    for (i = 0; i < len; i++)
        fputc((int)(i & 0xff), f);
    fclose(f);
    return name;
}

static uint8_t buf[0x20000];

static char logged[4096];

static void log_cb(const void *ctx, const char *s, const int len)
{
    (void)ctx;
    (void)len;
    if (strlen(logged) + strlen(s) < sizeof(logged))
        strcat(logged, s);
}

int main(void)
{
    const char *img = make_file("mem_acc_list.bin", 0x2000);
    const char *img2 = make_file("mem_acc_list2.bin", 0x2000);
    dcd_tree_handle_t h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    dcd_tree_handle_t h2, h3;
    ocsd_file_mem_region_t regs[2] = { { 0, 0x10000, 0x100 }, { 0x800, 0x40000, 0x100 } };

    CHECK(img != NULL && img2 != NULL);
    CHECK(h != C_API_INVALID_TREE_HANDLE);

    /* one object per path */
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x100000, OCSD_MEM_SPACE_ANY, img), OCSD_OK);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x200000, OCSD_MEM_SPACE_ANY, img), OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x100000, OCSD_MEM_SPACE_ANY, img), OCSD_ERR_MEM_ACC_OVERLAP);

    /* a region at file offset 0x800 stretches the base range [0x10000, 0x100ff] to 0x107ff */
    CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, regs, 2, OCSD_MEM_SPACE_ANY, img2), OCSD_OK);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x10700, OCSD_MEM_SPACE_ANY, buf, 0x10), OCSD_ERR_MEM_ACC_OVERLAP);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x10800, OCSD_MEM_SPACE_ANY, buf, 0x10), OCSD_OK);

    /* only the new ends are tested: a buffer enclosing the whole file is taken ... */
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0xf0000, OCSD_MEM_SPACE_ANY, buf, 0x20000), OCSD_OK);
    /* ... one with an end inside a listed accessor is not, unless no space bit is shared */
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x101ffe, OCSD_MEM_SPACE_EL1N, buf, 0x10), OCSD_ERR_MEM_ACC_OVERLAP);

    /* removal: the first listed accessor holding the address, any space bit in common */
    CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x100100, OCSD_MEM_SPACE_EL1N), OCSD_OK);  /* the file */
    CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x100100, OCSD_MEM_SPACE_EL2), OCSD_OK);   /* the enclosing buffer */
    CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x100100, OCSD_MEM_SPACE_ANY), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x40080, OCSD_MEM_SPACE_ANY), OCSD_OK);    /* img2 by its region */

    /* a removed file's object stays: other starts are still a different range */
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x200000, OCSD_MEM_SPACE_ANY, img), OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x100000, OCSD_MEM_SPACE_ANY, img), OCSD_OK);
    /* img2 comes back whole from its region's start: the stretched base is there again */
    CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &regs[1], 1, OCSD_MEM_SPACE_ANY, img2), OCSD_OK);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x10700, OCSD_MEM_SPACE_ANY, buf, 0x10), OCSD_ERR_MEM_ACC_OVERLAP);

    /* a region without a size, at another offset, is an invalid range */
    {
        ocsd_file_mem_region_t r = { 0x10, 0x300000, 0 };
        CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &r, 1, OCSD_MEM_SPACE_ANY, "mem_acc_list3.bin"), OCSD_ERR_NOT_INIT);
        make_file("mem_acc_list3.bin", 0x100);
        CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &r, 1, OCSD_MEM_SPACE_ANY, "mem_acc_list3.bin"), OCSD_ERR_MEM_ACC_RANGE_INVALID);
        /* a region past the end of the file fails the object's set-up */
        r.region_size = 0x100;
        CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &r, 1, OCSD_MEM_SPACE_ANY, "mem_acc_list3.bin"), OCSD_ERR_NOT_INIT);
    }

    /* the objects are process-wide: another tree finds a file at the same place only */
    CHECK(make_file("mem_acc_list4.bin", 0x2000) != NULL);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x600000, OCSD_MEM_SPACE_ANY, "mem_acc_list4.bin"), OCSD_OK);
    h2 = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h2, 0x300000, OCSD_MEM_SPACE_ANY, "mem_acc_list4.bin"), OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h2, 0x600000, OCSD_MEM_SPACE_ANY, "mem_acc_list4.bin"), OCSD_OK);
    /* a region a third tree adds to the object is the other trees' too */
    h3 = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    {
        ocsd_file_mem_region_t r[2] = { { 0, 0x600000, 0x100 }, { 0x1000, 0x500000, 0x100 } };
        CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x500080, OCSD_MEM_SPACE_ANY, buf, 0x10), OCSD_OK);
        CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x500080, OCSD_MEM_SPACE_ANY), OCSD_OK);
        CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h3, r, 2, OCSD_MEM_SPACE_ANY, "mem_acc_list4.bin"), OCSD_OK);
        CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x500080, OCSD_MEM_SPACE_ANY, buf, 0x10), OCSD_ERR_MEM_ACC_OVERLAP);
        CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h2, 0x500080, OCSD_MEM_SPACE_ANY, buf, 0x10), OCSD_ERR_MEM_ACC_OVERLAP);
        /* and it is mapped there (the ranges the first tree logs) */
        ocsd_def_errlog_init(OCSD_ERR_SEV_INFO, 1);
        ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL);
        CHECK_EQ(ocsd_def_errlog_set_strprint_cb(h, NULL, log_cb), OCSD_OK);
        logged[0] = 0;
        ocsd_tl_log_mapped_mem_ranges(h);
        CHECK(strstr(logged, "0x500000") != NULL);
        ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);
    }
    /* the object goes when no tree holds it: then another place is fine */
    ocsd_destroy_dcd_tree(h3);
    ocsd_destroy_dcd_tree(h2);
    h2 = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h2, 0x300000, OCSD_MEM_SPACE_ANY, "mem_acc_list4.bin"), OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE);
    ocsd_destroy_dcd_tree(h);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h2, 0x300000, OCSD_MEM_SPACE_ANY, "mem_acc_list4.bin"), OCSD_OK);
    ocsd_destroy_dcd_tree(h2);

    remove("mem_acc_list.bin");
    remove("mem_acc_list2.bin");
    remove("mem_acc_list3.bin");
    remove("mem_acc_list4.bin");
    return CHECKS_DONE("test_mem_acc_list");
}
