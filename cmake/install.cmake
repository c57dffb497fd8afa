include(CMakePackageConfigHelpers)

install(TARGETS weft weft_static weft_parallel EXPORT WeftTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT WeftTargets NAMESPACE Weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Weft)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/WeftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/WeftConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Weft)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/WeftConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/WeftConfig.cmake ${PROJECT_BINARY_DIR}/WeftConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Weft)

# The .pc file finds its prefix from where it lies, so the install tree can move. A static link
# (pkg-config --static) needs what libweft.a's objects call: the optional libraries it was built
# with, libstdc++ (a C program links it too) and the C runtime's pieces.
set(WEFT_PC_LIBS_PRIVATE -lpugixml)
if(WEFT_ENABLE_HWLOC)
  list(APPEND WEFT_PC_LIBS_PRIVATE -lhwloc)
endif()
if(WEFT_ENABLE_UCX)
  list(APPEND WEFT_PC_LIBS_PRIVATE -lucp -lucs)
endif()
list(APPEND WEFT_PC_LIBS_PRIVATE -lstdc++ -lm)
if(CMAKE_DL_LIBS)
  list(APPEND WEFT_PC_LIBS_PRIVATE -l${CMAKE_DL_LIBS})
endif()
list(APPEND WEFT_PC_LIBS_PRIVATE -lpthread)
list(JOIN WEFT_PC_LIBS_PRIVATE " " WEFT_PC_LIBS_PRIVATE)
file(RELATIVE_PATH WEFT_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/weft.pc.in ${PROJECT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
