# find_package(opencsd) support for an installed copy: imports
# opencsd::opencsd_c_api (which brings libopencsd along).
get_filename_component(_ocsd_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET opencsd::opencsd_c_api)
    add_library(opencsd::opencsd_c_api SHARED IMPORTED)
    set_target_properties(opencsd::opencsd_c_api PROPERTIES
        IMPORTED_LOCATION "${_ocsd_prefix}/lib/libopencsd_c_api.so"
        INTERFACE_INCLUDE_DIRECTORIES "${_ocsd_prefix}/include"
        INTERFACE_LINK_LIBRARIES "${_ocsd_prefix}/lib/libopencsd.so")
endif()
set(opencsd_FOUND TRUE)
