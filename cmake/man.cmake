# Man pages for the tools, made from their --help by help2man (a Debian package) at build time
# and installed to share/man/man1. Without help2man they are left out, with a message.
find_program(HELP2MAN help2man)
if(HELP2MAN)
  message(STATUS "Man pages: on")
else()
  message(STATUS "Man pages: off (install help2man)")
endif()

# weft_man_page(target "one-line description"): the page of the tool `target` builds.
function(weft_man_page target description)
  if(NOT HELP2MAN)
    return()
  endif()
  set(page ${CMAKE_CURRENT_BINARY_DIR}/${target}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr --version-string=${PROJECT_VERSION}
            --name=${description} --output=${page} $<TARGET_FILE:${target}>
    DEPENDS ${target}
    COMMENT "Man page ${target}.1"
    VERBATIM)
  add_custom_target(${target}-man ALL DEPENDS ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
